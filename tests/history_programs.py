"""Run a target's bug-history programs (``ctxaudit/targets/<target>/history/``) on one
release and judge them against the record: each in its own process, forked after one
import of the library (``tests/fork_programs.py``). A program that exits neither 0
(holds) nor 1 (reproduces) is ctxaudit's own error: could not check, never a verdict."""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ctxaudit.outcomes import CouldNotCheck
from ctxaudit.targets import get

FORK = Path(__file__).with_name("fork_programs.py")


def releases(bugs: Sequence[Any]) -> list[str]:
    """Every release the record says a program fails or holds on."""
    return sorted({v for bug in bugs for v in (*bug.fails_on, *bug.holds_on)})


def judge_on_release(name: str, version: str, bugs: Sequence[Any], preload: str) -> None:
    """Every bug's program on ``name==version``: it reproduces where the record says it
    fails, and not where it says it holds (``preload``: the modules imported once)."""
    target = get(name)
    process = target.suite_process(
        target.expand(f"{name}=={version}")[0], Path(tempfile.gettempdir())
    )
    assert process is not None, f"{name} runs in its release's environment"
    python, env = process
    cases = [
        (bug, version in bug.fails_on)
        for bug in bugs
        if version in bug.fails_on or version in bug.holds_on
    ]
    # -P: the folder of fork_programs.py (tests/, which holds the langchain/ and
    # pydantic_ai/ test packages) must not shadow the library the programs import
    programs = [str(bug.program) for bug, _ in cases]
    cmd = [python, "-P", str(FORK), "--preload", preload, *programs]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, check=False)
    if proc.returncode != 0:
        raise CouldNotCheck(f"the programs could not run on {name} {version}:\n{proc.stderr}")
    results = json.loads(proc.stdout)
    runs = [(bug, fails, results[str(bug.program)]) for bug, fails in cases]
    broken = [
        f"{bug.program.name} exited {r['exit']}:\n{r['output'][-2000:]}"
        for bug, _, r in runs
        if r["exit"] not in (0, 1)
    ]
    if broken:
        raise CouldNotCheck(f"on {name} {version}: " + "\n".join(broken))
    wrong = [
        f"{bug.upstream} {'holds' if fails else 'reproduces'} on {name} {version}, "
        f"expected it to {'reproduce' if fails else 'hold'}:\n{r['output']}"
        for bug, fails, r in runs
        if (r["exit"] == 1) != fails
    ]
    assert not wrong, "\n".join(wrong)
