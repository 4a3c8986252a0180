"""google-adk in ctxaudit's own interpreter: trees, environments, and the in-environment
suite (``tests/google_adk/inenv``) run as a child in each release's environment.

``--google-adk=SPEC`` names one release or tree; without it the audited releases run
(:data:`RELEASES`). The session lockstep runs here under ``smoke`` (a sixth of the gate's
examples: three services, every write read back in every form, 75 s under ``ci``): it
must drive each service and hold; the search is the audit's (``ctxaudit audit --target
google-adk``). Every release's findings are checked by their programs.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ctxaudit.targets import get
from ctxaudit.targets.base import TargetError
from ctxaudit.targets.google_adk import findings
from ctxaudit.targets.google_adk.tree import LIBRARY
from tests import inenv_child

#: the releases CI runs: the current one (1.39.1 and 1.20.0 are the audit's)
RELEASES = ("2.13.0",)
SESSIONS = "tests/google_adk/inenv/test_sessions.py"


def child(spec: str, args: list[str], **extra: str) -> subprocess.CompletedProcess[str]:
    return inenv_child.child("google-adk", spec, args, **extra)


def test_lockstep_and_findings(request: pytest.FixtureRequest) -> None:
    """S2, S3, S6 on each service, and the registered findings, on each selected release."""
    spec = request.config.getoption("--google-adk")
    failed = []
    for one in [spec] if spec else [f"google-adk=={v}" for v in RELEASES]:
        run = child(one, ["tests/google_adk/inenv"], CTXAUDIT_PROFILE="smoke")
        if run.returncode != 0:
            failed.append(f"{one} (exit {run.returncode}):\n{run.stdout[-6000:]}{run.stderr}")
    assert not failed, "\n\n".join(failed)


#: what the lockstep says where it meets each finding (the invariant that sees it)
SEEN_AS = {
    "ADK-DB-SAME-TIME-REORDERED": "SI1: events read out of the order they were appended",
    "ADK-DB-ZERO-RECENT-READS-ALL": "SI5: the newest 0 are []",
}


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("finding", [f.id for f in findings.FINDINGS])
def test_the_lockstep_reaches_each_finding(finding: str, seed: int) -> None:
    """The lockstep fails on each finding, on the newest release it is registered for,
    through the service it names, with only the other findings left out, under the
    gate's own examples and another seed's: a reach one seed has and the next lacks is
    luck (SAME-TIME was, until every example began with a session)."""
    version = max(findings.BY_ID[finding].versions, key=lambda v: tuple(map(int, v.split("."))))
    others = [f.id for f in findings.FINDINGS if version in f.versions and f.id != finding]
    run = child(
        f"google-adk=={version}",
        [f"{SESSIONS}::TestDatabase", "--hypothesis-profile=mutation",
         f"--hypothesis-seed={seed}"],
        CTXAUDIT_FINDINGS=",".join(others) or "none",
    )  # fmt: skip
    assert run.returncode == 1 and SEEN_AS[finding] in run.stdout, run.stdout[-3000:]


def test_specs_and_errors(tmp_path: Path) -> None:
    target = get("google-adk")
    assert target.claims("google-adk==2.13.0") and not target.claims("langchain")
    assert target.resolve("2.13.0").version == "2.13.0"
    with pytest.raises(TargetError, match="not a google-adk tree"):
        LIBRARY.from_path(tmp_path)
    with pytest.raises(TargetError, match="is not a version number"):
        LIBRARY.resolve("google-adk==one")
