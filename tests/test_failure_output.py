"""A failing property test prints one screen (ctxaudit/failure_output.py).

Structure only, never time: the report names the property's message, lists
the shrunk program, holds the one command that replays the example, and the
captured log is the failing example's alone. Each case runs pytest in a child
process on a small test file (or a known break of gitreins) under the
default profile.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CONFTEST = """
from ctxaudit import failure_output, profiles
from hypothesis.internal.conjecture import engine

profiles.load_from_env()
# these tests read the shrunk example: shrinking runs to its end, however slow the
# machine (the gate profile's 20 s bound would make the example depend on the load)
engine.MAX_SHRINKING_SECONDS = 10**6


def pytest_addoption(parser):
    failure_output.addoption(parser)


def pytest_configure(config):
    failure_output.register(config, [])
"""

# A state machine whose target logs a line from its own worker thread at every step
# (as gitreins' evaluator does), and fails once a drawn value is over 5.
MACHINE = """
import logging
import threading

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

log = logging.getLogger("target")


class Machine(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.total = 0
        with open("examples.txt", "a") as fh:  # one line per example run
            fh.write("example\\n")

    @rule(n=st.integers(0, 10))
    def add(self, n):
        worker = threading.Thread(target=log.warning, args=("target step n=%d", n))
        worker.start()
        worker.join()
        self.total += n
        assert n <= 5, f"P1: the model allows at most 5, the target took {n}"

    @invariant()
    def never_negative(self):
        assert self.total >= 0


TestMachine = Machine.TestCase
"""

GIVEN = """
import logging

from hypothesis import given, strategies as st

log = logging.getLogger("target")


@given(st.lists(st.integers(0, 100), min_size=1))
def test_sum(xs):
    log.warning("target saw %r", xs)
    assert sum(xs) < 150, f"P2: the model caps the sum at 150, the target summed {sum(xs)}"
"""


def run(tmp: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    base = {**os.environ, "CTXAUDIT_PROFILE": "ci", "PYTHONDONTWRITEBYTECODE": "1"}
    for name in ("CTXAUDIT_RESULTS", "COLUMNS"):
        base.pop(name, None)
    base["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=tmp, env={**base, **(env or {})}, capture_output=True, text=True, check=False,
        timeout=120,
    )  # fmt: skip
    return proc.returncode, proc.stdout + proc.stderr


def replay_args(output: str) -> list[str]:
    """The arguments of the replay command the report printed (after ``bin/ctxaudit test``)."""
    (line,) = [ln for ln in output.splitlines() if "--replay=" in ln]
    words = shlex.split(line.strip())
    assert words[:2] == ["bin/ctxaudit", "test"], line
    return words[2:]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    return tmp_path


def test_stateful_failure_is_one_screen_and_replays(project: Path) -> None:
    (project / "test_machine.py").write_text(MACHINE)
    stats = project / "stats.json"
    code, out = run(project, "test_machine.py", env={"CTXAUDIT_FAILURE_STATS": str(stats)})
    assert code == 1, out
    assert "AssertionError: P1: the model allows at most 5, the target took 6" in out
    assert "state.add(n=6)" in out  # the shrunk program, its drawn value
    assert "state.never_negative()" not in out  # invariants are not listed step by step
    # the captured log holds the failing example's lines only: Hypothesis tried many
    # examples (each logged from a worker thread), the report shows the last one's
    logged = re.findall(r"target step n=(\d+)", out)
    assert logged and logged[-1] == "6" and len(logged) <= 2, logged
    assert len(out.splitlines()) < 100
    (shrunk,) = json.loads(stats.read_text())
    assert shrunk["failed"] and shrunk["shrink_examples"] > 0

    examples = project / "examples.txt"
    assert len(examples.read_text().splitlines()) > 10
    examples.unlink()
    code, again = run(project, *replay_args(out))
    assert code == 1, again
    assert "P1: the model allows at most 5, the target took 6" in again
    assert examples.read_text().splitlines() == ["example"]  # that example alone
    assert "state.add(n=6)" in again and "state.never_negative()" not in again
    assert len(again.splitlines()) < 100


def test_given_failure_replays_and_logs_only_the_failing_example(project: Path) -> None:
    (project / "test_given.py").write_text(GIVEN)
    code, out = run(project, "test_given.py")
    assert code == 1, out
    assert "AssertionError: P2: the model caps the sum at 150" in out
    assert len(re.findall(r"target saw", out)) == 1, out
    code, again = run(project, *replay_args(out))
    assert code == 1 and "P2: the model caps the sum at 150" in again, again


def test_all_logs_on_request(project: Path) -> None:
    (project / "test_given.py").write_text(GIVEN)
    code, out = run(project, "test_given.py", "--target-log=all", "--failure-format=pytest")
    assert code == 1
    assert len(re.findall(r"target saw", out)) > 20  # every example Hypothesis tried
    assert "--replay=" not in out  # pytest's own report


def test_known_break_of_gitreins_fits_on_one_screen(tmp_path: Path) -> None:
    """A real break (B3: a tool call costs nothing) caught by the EvalCap lockstep."""
    from ctxaudit.targets.gitreins.tree import resolve

    pinned = resolve("")
    copy = tmp_path / "gitreins"
    shutil.copytree(pinned.root / "engine", copy / "engine")
    (copy / "PKG-INFO").write_text(
        f"Metadata-Version: 2.1\nName: gitreins\nVersion: {pinned.version}\n"
    )
    cap = copy / "engine" / "eval_cap.py"
    text = cap.read_text()
    assert "self.iteration_credit += self.tool_call_weight" in text
    cap.write_text(text.replace("self.iteration_credit += self.tool_call_weight", "pass", 1))
    code, out = run(ROOT, "tests/gitreins/test_budget_lockstep.py", f"--gitreins={copy}", "-x")
    assert code == 1, out
    assert re.search(r"^AssertionError: B\d", out, re.M), out
    assert "--replay=" in out and f"--gitreins={copy}" in out
    assert len(out.splitlines()) < 100, out


def test_a_bound_on_shrinking_is_said(project: Path) -> None:
    """When shrinking stops at its bound, the report says the example may not be minimal."""
    conftest = project / "conftest.py"
    conftest.write_text(
        conftest.read_text()
        + "\nfrom hypothesis.internal.conjecture import engine\nengine.MAX_SHRINKING_SECONDS = 0\n"
    )
    (project / "test_given.py").write_text(GIVEN)
    code, out = run(project, "test_given.py")
    assert code == 1, out
    assert "this example may not be minimal" in out
    assert "five minutes" not in out


def _replayed_by_environment(project: Path, nodeid: str, out: str) -> tuple[int, str, dict]:
    """Replay the example ``out`` printed through ``CTXAUDIT_REPLAY`` (what the fix
    audit sets), the results written as the audit reads them."""
    import hypothesis

    from ctxaudit import replay

    (blob,) = [w.split("=", 1)[1] for w in replay_args(out) if w.startswith("--replay=")]
    results = project / "results.json"
    env = replay.environ({nodeid: [hypothesis.__version__, f"b'{blob}'"]})
    env["CTXAUDIT_RESULTS"] = str(results)
    code, again = run(project, nodeid.split("::")[0], "-p", "ctxaudit.pytest_results", env=env)
    (test,) = [t for t in json.loads(results.read_text())["tests"] if t["when"] == "call"]
    return code, again, test


def test_the_environment_replays_a_machine_as_replay_does(project: Path) -> None:
    """``CTXAUDIT_REPLAY`` and ``--replay`` are one mechanism (ctxaudit/replay.py): the
    example a report printed, named by node id, runs alone, and the replay records that
    it drew every choice of the example as recorded."""
    (project / "test_machine.py").write_text(MACHINE)
    code, out = run(project, "test_machine.py")
    assert code == 1, out
    examples = project / "examples.txt"
    examples.unlink()
    code, again, test = _replayed_by_environment(
        project, "test_machine.py::TestMachine::runTest", out
    )
    assert code == 1 and "P1: the model allows at most 5, the target took 6" in again, again
    assert examples.read_text().splitlines() == ["example"]  # that example alone
    rec = test["replay"]
    assert rec["choices"] is not None and rec["drawn"] == rec["choices"], rec
    assert rec["misaligned_at"] is None


def test_the_environment_replays_a_given_test(project: Path) -> None:
    (project / "test_given.py").write_text(GIVEN)
    code, out = run(project, "test_given.py")
    assert code == 1, out
    code, again, test = _replayed_by_environment(project, "test_given.py::test_sum", out)
    assert code == 1, again
    assert test["outcome"] == "failed" and "P2: the model caps the sum" in test["longrepr"]
    rec = test["replay"]  # the example was decoded and drawn as recorded
    assert rec["choices"] is not None and rec["drawn"] == rec["choices"], rec
    assert rec["misaligned_at"] is None


def test_importing_the_replay_changes_nothing_in_hypothesis() -> None:
    """The replay is installed when one is asked for, never by importing its module."""
    code = (
        "from hypothesis import core, stateful\n"
        "before = (stateful.get_state_machine_test, core.decode_failure)\n"
        "import ctxaudit.replay, ctxaudit.failure_output, ctxaudit.fixaudit\n"
        "assert before == (stateful.get_state_machine_test, core.decode_failure)\n"
        "assert not hasattr(stateful.RuleBasedStateMachine,"
        " '_hypothesis_internal_use_reproduce_failure')\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=60)
