"""A seed under a derandomized profile (``ci``, ``mutation``, ``smoke``) is a search of
its own: Hypothesis ignores ``--hypothesis-seed`` when ``derandomize`` is set, so without
``ctxaudit/seeding.py`` every seed ran seed 0's examples, and a fully fixed tree "held
under seeds 0, 1 and 2" on one search. Seed 0 is the profile's own examples; another
seed draws others, the same on every run; a seed that is not a decimal integer is
refused, never read as 0."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SUITE = """\
from hypothesis import given, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule

@given(st.integers())
def test_drawn(x):
    print("drawn", x)

class Machine(RuleBasedStateMachine):
    @rule(n=st.integers())
    def step(self, n):
        print("stepped", n)

TestMachine = Machine.TestCase
"""


def drawn(folder: Path, profile: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CTXAUDIT_", "PYTHON"))}
    env |= {"CTXAUDIT_PROFILE": profile, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
         "-p", "ctxaudit.pytest_plugin", "--rootdir", str(folder), str(folder), *args],
        cwd=folder, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip


def examples(run: subprocess.CompletedProcess[str]) -> list[str]:
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return [ln for ln in run.stdout.splitlines() if ln.startswith(("drawn", "stepped"))]


@pytest.mark.parametrize("profile", ["ci", "smoke"])
def test_each_seed_is_its_own_search_and_the_same_on_every_run(
    tmp_path: Path, profile: str
) -> None:
    (tmp_path / "test_suite.py").write_text(SUITE)
    own = examples(drawn(tmp_path, profile))
    by_seed = {s: examples(drawn(tmp_path, profile, f"--hypothesis-seed={s}")) for s in (0, 1, 2)}
    assert by_seed[0] == own  # seed 0: the profile's own derandomized examples
    assert by_seed[1] != own and by_seed[2] != own and by_seed[1] != by_seed[2]
    # the stateful machine's steps differ too, not only the plain test's
    steps = {s: [e for e in by_seed[s] if e.startswith("stepped")] for s in (0, 1)}
    assert steps[0] and steps[0] != steps[1]
    assert examples(drawn(tmp_path, profile, "--hypothesis-seed=1")) == by_seed[1]


def test_a_seed_that_is_not_a_decimal_integer_is_refused(tmp_path: Path) -> None:
    (tmp_path / "test_suite.py").write_text(SUITE)
    run = drawn(tmp_path, "ci", "--hypothesis-seed=0x1")
    assert run.returncode == pytest.ExitCode.USAGE_ERROR, run.stdout + run.stderr
    assert "--hypothesis-seed=0x1: under the derandomized profile 'ci'" in run.stderr
