"""Run a finding's seed-free program (plain library code, exit 1 when the finding
reproduces) in this interpreter, for a regression test in a release's environment."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest


def reproduces(finding_id: str, registered: Iterable[str], program: Path, release: str) -> bool:
    """Whether ``program`` reproduces ``finding_id``; skipped where it is not registered.
    A program that neither reproduces nor runs cleanly (another exit) is ctxaudit's
    error, never a verdict."""
    if finding_id not in set(registered):
        pytest.skip(f"{finding_id} is not registered for {release}")
    proc = subprocess.run(
        [sys.executable, str(program)], capture_output=True, text=True, timeout=300, check=False
    )
    # an uncaught exception ends Python with exit 1 too: a crash, never a verdict
    crashed = "Traceback (most recent call last):" in proc.stderr
    if proc.returncode not in (0, 1) or crashed:
        raise RuntimeError(f"{program.name} could not run:\n{proc.stdout}{proc.stderr}")
    print(proc.stdout)
    return proc.returncode == 1
