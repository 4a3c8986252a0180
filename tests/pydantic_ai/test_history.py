"""pydantic-ai's own bug history (ctxaudit/targets/pydantic_ai/history/): each upstream
bug's seed-free program, run in the release environments the suite builds anyway, each
program in its own process forked after one import of pydantic-ai
(``tests/langchain/fork_programs.py``). A program that exits neither 0 (holds) nor 1
(reproduces) is ctxaudit's own error: could not check, never a verdict.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import pytest

from ctxaudit.outcomes import CouldNotCheck
from ctxaudit.targets import get
from ctxaudit.targets.pydantic_ai.history import BUGS

RELEASES = sorted({v for bug in BUGS for v in (*bug.fails_on, *bug.holds_on)})
FORK = Path(__file__).parents[1] / "langchain" / "fork_programs.py"
PRELOAD = "pydantic_ai,pydantic_ai.models.function,pydantic_ai.usage,pydantic_ai.exceptions"


@pytest.mark.parametrize("version", RELEASES)
def test_programs_on_release(version: str) -> None:
    """Every bug's program on one release: it reproduces where the record says it
    fails, and not where it says it holds."""
    target = get("pydantic-ai")
    process = target.suite_process(
        target.expand(f"pydantic-ai=={version}")[0], Path(tempfile.gettempdir())
    )
    assert process is not None, "pydantic-ai runs in its release's environment"
    python, env = process
    cases = [
        (bug, version in bug.fails_on)
        for bug in BUGS
        if version in bug.fails_on or version in bug.holds_on
    ]
    cmd = [python, str(FORK), "--preload", PRELOAD, *(str(bug.program) for bug, _ in cases)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, check=False)
    if proc.returncode != 0:
        raise CouldNotCheck(f"the programs could not run on pydantic-ai {version}:\n{proc.stderr}")
    results = json.loads(proc.stdout)
    runs = [(bug, fails, results[str(bug.program)]) for bug, fails in cases]
    broken = [
        f"{bug.program.name} exited {r['exit']}:\n{r['output'][-2000:]}"
        for bug, _, r in runs
        if r["exit"] not in (0, 1)
    ]
    if broken:
        raise CouldNotCheck(f"on pydantic-ai {version}: " + "\n".join(broken))
    wrong = [
        f"{bug.upstream} {'holds' if fails else 'reproduces'} on pydantic-ai {version}, "
        f"expected it to {'reproduce' if fails else 'hold'}:\n{r['output']}"
        for bug, fails, r in runs
        if (r["exit"] == 1) != fails
    ]
    assert not wrong, "\n".join(wrong)


def test_the_record_is_consistent() -> None:
    """Each bug names a program that exists and is plain pydantic-ai; a fixed one holds
    after its fix and either reproduces before it or says why that is not run."""
    for bug in BUGS:
        assert bug.program.is_file(), bug.program
        assert bug.holds_on, bug.upstream
        assert bug.before in bug.fails_on or bug.before_unchecked, bug.upstream
        text = bug.program.read_text()
        assert "ctxaudit" not in text and "model." not in text, bug.upstream
