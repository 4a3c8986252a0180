"""Run a finding's seed-free program (plain library code, exit 1 when the finding
reproduces) in this interpreter, for a regression test in a release's environment."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest

from ctxaudit import warm

#: seconds a program may take: it turns a hang into an error, never a verdict
TIMEOUT = 300


def reproduces(
    finding_id: str,
    registered: Iterable[str],
    program: Path,
    release: str,
    preload: Sequence[str] = (),
) -> bool:
    """Whether ``program`` reproduces ``finding_id``; skipped where it is not registered.
    A program that neither reproduces nor runs cleanly (another exit) is ctxaudit's
    error, never a verdict.

    ``python program.py``, as its report prints it, but forked from a warm interpreter
    that has imported ``preload`` (``ctxaudit/warm.py``): of a program's 2 s on
    openai-agents, 1.7 s is importing the library, paid once per suite process, not once
    per program. Where it cannot be served warm (``CTXAUDIT_WARM=0``, a guard) it runs
    cold."""
    if finding_id not in set(registered):
        pytest.skip(f"{finding_id} is not registered for {release}")
    cmd = [sys.executable, str(program)]
    with tempfile.TemporaryDirectory(prefix="ctxaudit-program-") as scratch:
        out = Path(scratch) / "output"
        code = warm.run(cmd, dict(os.environ), Path.cwd(), out, preload, timeout=TIMEOUT)
        if code is not None:
            output = out.read_text(encoding="utf-8", errors="replace")
        else:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, check=False)
            code, output = proc.returncode, proc.stdout + proc.stderr
    # an uncaught exception ends Python with exit 1 too: a crash, never a verdict
    crashed = "Traceback (most recent call last):" in output
    if code not in (0, 1) or crashed:
        raise RuntimeError(f"{program.name} could not run (exit {code}):\n{output}")
    print(output)
    return code == 1
