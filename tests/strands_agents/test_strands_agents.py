"""strands-agents in ctxaudit's own interpreter: trees, environments, and the
in-environment suite (``tests/strands_agents/inenv``) run as a child in each release's
environment.

``--strands-agents=SPEC`` names one release or tree; without it the current release runs
(:data:`RELEASES`). The restore lockstep runs here under ``smoke``: it must drive the agent
and hold with the registered findings left out; the search is the audit's (``ctxaudit
audit --target strands-agents``). Every release's findings are checked by their programs.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ctxaudit.targets import get
from ctxaudit.targets.base import TargetError
from ctxaudit.targets.strands_agents import findings
from ctxaudit.targets.strands_agents.tree import LIBRARY
from tests import inenv_child

#: the releases CI runs: the current one (1.43.0 and 1.40.0 are the audit's)
RELEASES = ("1.62.0",)
RESTORE = "tests/strands_agents/inenv/test_restore.py"


def child(spec: str, args: list[str], **extra: str) -> subprocess.CompletedProcess[str]:
    return inenv_child.child("strands-agents", spec, args, **extra)


def test_lockstep_and_findings(request: pytest.FixtureRequest) -> None:
    """S2, S6, C1 on the agent, and the registered findings, on each selected release."""
    spec = request.config.getoption("--strands-agents")
    failed = []
    for one in [spec] if spec else [f"strands-agents=={v}" for v in RELEASES]:
        run = child(one, ["tests/strands_agents/inenv"], CTXAUDIT_PROFILE="smoke")
        if run.returncode != 0:
            failed.append(f"{one} (exit {run.returncode}):\n{run.stdout[-6000:]}{run.stderr}")
    assert not failed, "\n\n".join(failed)


#: the concern's seed-free program that reaches each finding (with the message-log store)
REACHED_BY = {
    "SA-SUMMARY-PIN-RESTORE": "summary-pinned-restored",
    "SA-WINDOW-PIN-RESTORE": "window-pinned-restored",
    "SA-FAILED-SUMMARY-SKIPS-RESTORE": "summary-failed-restored",
    "SA-FOLD-TAKES-RECENT": "summary-kept-opens-on-a-result",
    "SA-PINS-FEWER-THAN-PIN-FIRST": "window-pins-more-than-it-held",
    "SA-RETRIED-REDACTION-NOT-STORED": "summary-retried-redacted",
}
#: what the program says it saw: the invariant that fails on each
SAW = {
    "SA-FOLD-TAKES-RECENT": "C1: R5: the summary s1 was sent",
    "SA-PINS-FEWER-THAN-PIN-FIRST": "S6: R2: the pinned",
}


@pytest.mark.parametrize("finding", [f.id for f in findings.FINDINGS])
def test_the_lockstep_reaches_each_finding(finding: str) -> None:
    """The lockstep's program fails on each finding, on the newest release it is
    registered for, with only the other findings left out, and says what it saw (R1: the
    restored conversation is another; R5: a summary took a recent message). The ci search
    alone does not reach every one: a pinned or failed-summary reduction followed by a
    restore through the message log is a narrow corner of what it draws, which the
    programs meet on every run."""
    version = max(findings.BY_ID[finding].versions, key=lambda v: tuple(map(int, v.split("."))))
    others = [f.id for f in findings.FINDINGS if version in f.versions and f.id != finding]
    run = child(
        f"strands-agents=={version}",
        [f"{RESTORE}::test_program[{REACHED_BY[finding]}-file]"],
        CTXAUDIT_FINDINGS=",".join(others) or "none",
    )
    saw = SAW.get(finding, "R1: the restored agent holds another")
    assert run.returncode == 1 and saw in run.stdout, run.stdout[-3000:]


def test_specs_and_errors(tmp_path: Path) -> None:
    target = get("strands-agents")
    assert target.claims("strands-agents==1.62.0") and not target.claims("langchain")
    assert target.resolve("1.62.0").version == "1.62.0"
    with pytest.raises(TargetError, match="not a strands-agents tree"):
        LIBRARY.from_path(tmp_path)
    with pytest.raises(TargetError, match="is not a version number"):
        LIBRARY.resolve("strands-agents==one")
