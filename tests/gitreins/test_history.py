"""Real history: GR-GAP-062 was broken up to 0.14.0 and fixed in 0.15.0.

The V7 property, run against each release in its own process, must fail on
0.14.0 with a shrunk counterexample and pass on 0.15.0 and later.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
V7 = "tests/gitreins/test_v7_valve_protects_cap.py"


def run_v7(version: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CTXAUDIT_PROFILE": "ci"}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            V7,
            f"--gitreins={version}",
            "-q",
            "-p",
            "no:cacheprovider",
            "--show-capture=no",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_v7_fails_on_0_14_0_with_a_counterexample() -> None:
    proc = run_v7("0.14.0")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out[-2000:]
    assert "V7: the input cap" in out and "Reproduce:" in out, out[-2000:]
    # Hypothesis shrank it and printed the failing case.
    assert "Failing test case" in out or "Falsifying example" in out, out[-2000:]


@pytest.mark.parametrize("version", ["0.15.0", "0.16.0", "0.17.0", "0.17.1"])
def test_v7_holds_from_0_15_0(version: str) -> None:
    proc = run_v7(version)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-2000:]
