"""langchain's own bug history (ctxaudit/targets/langchain/history/): each upstream bug's
seed-free program, run in the release environments the suite builds anyway.

A fixed bug's program must reproduce it on the releases before its fix and not on those
after; an unfixed one's must reproduce it on the current release. A program that exits
neither 0 (holds) nor 1 (reproduces) is ctxaudit's own error: could not check, never a
verdict.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import pytest

from ctxaudit.outcomes import CouldNotCheck
from ctxaudit.targets import get
from ctxaudit.targets.langchain.findings import BY_ID
from ctxaudit.targets.langchain.history import BUGS
from ctxaudit.targets.langchain.tree import PINNED

RELEASES = sorted({v for bug in BUGS for v in (*bug.fails_on, *bug.holds_on)})


FORK = Path(__file__).with_name("fork_programs.py")
#: what every program imports, loaded once before the programs fork
PRELOAD = (
    "langchain.agents,langchain.agents.middleware,langchain.agents.structured_output,"
    "langchain_core.language_models.fake_chat_models,langchain_core.messages,"
    "langchain_core.tools,pydantic"
)


@pytest.mark.parametrize("version", RELEASES)
def test_programs_on_release(version: str) -> None:
    """Every bug's program on one release, each in its own process (forked after one
    import of langchain): it reproduces where the record says it fails, and not where
    it says it holds."""
    target = get("langchain")
    process = target.suite_process(
        target.expand(f"langchain=={version}")[0], Path(tempfile.gettempdir())
    )
    assert process is not None, "langchain runs in its release's environment"
    python, env = process
    cases = [
        (bug, version in bug.fails_on)
        for bug in BUGS
        if version in bug.fails_on or version in bug.holds_on
    ]
    cmd = [python, str(FORK), "--preload", PRELOAD, *(str(bug.program) for bug, _ in cases)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, check=False)
    if proc.returncode != 0:
        raise CouldNotCheck(f"the programs could not run on langchain {version}:\n{proc.stderr}")
    results = json.loads(proc.stdout)
    runs = [(bug, fails, results[str(bug.program)]) for bug, fails in cases]
    broken = [
        f"{bug.program.name} exited {r['exit']}:\n{r['output'][-2000:]}"
        for bug, _, r in runs
        if r["exit"] not in (0, 1)
    ]
    if broken:
        raise CouldNotCheck(f"on langchain {version}: " + "\n".join(broken))
    wrong = [
        f"{bug.upstream} {'holds' if fails else 'reproduces'} on langchain {version}, "
        f"expected it to {'reproduce' if fails else 'hold'}:\n{r['output']}"
        for bug, fails, r in runs
        if (r["exit"] == 1) != fails
    ]
    assert not wrong, "\n".join(wrong)


def test_the_record_is_consistent() -> None:
    """Each bug names a program that exists; a fixed one has a release on each side of
    its fix, an unfixed one reproduces on the current release; a registered finding's
    program is that finding's."""
    for bug in BUGS:
        assert bug.program.is_file(), bug.program
        if bug.fix.startswith("unfixed"):
            assert PINNED in bug.fails_on and not bug.holds_on, bug.upstream
        else:
            assert bug.fails_on and bug.holds_on and bug.before in bug.fails_on, bug.upstream
        if bug.finding:
            assert bug.finding in BY_ID and bug.program.parent.name == "repro", bug.upstream
        else:
            assert bug.program.parent.name == "history", bug.upstream


def test_programs_are_plain_langchain() -> None:
    """A program is what an upstream report quotes: it imports nothing of ctxaudit."""
    for bug in BUGS:
        text = bug.program.read_text()
        assert "ctxaudit" not in text.replace("ctxaudit:", "") and "model." not in text, bug
