"""Mutants one after another in one worker process (``isolation = "process"``).

The runner lightspeed-stack needs: its service (app, OGX, fake LLM) starts once per
worker, so a session fixture must live across mutants, and a mutant that hangs the
process must cost a restart of the worker, not the run.
"""

from __future__ import annotations

import json
from pathlib import Path

from mutation import driver, engine
from mutation.config import TargetConfig
from tests.mutation.test_runner import CATALOGUE, toy_tree

#: seconds beyond the tests' own time before a mutant's child is a timeout: far
#: above a toy test's milliseconds on a loaded machine, so only a mutant that never
#: ends times out
TIMEOUT_CONSTANT = 8.0

TESTS = """
import os

import pytest

from toypkg.meter import Meter, countdown


@pytest.fixture(scope="session")
def service():
    # one line per start of the session's "service"
    with open(os.environ["TOY_STARTS"], "a") as f:
        f.write("start\\n")
    return "up"


def test_add(service):
    m = Meter()
    assert m.add(4) is False
    assert m.total == 4
    assert m.add(6) is True


def test_countdown(service):
    assert countdown(3) == 0
"""


def test_mutants_share_one_process_and_a_hang_restarts_the_worker(
    tmp_path: Path, monkeypatch
) -> None:
    root = toy_tree(tmp_path)
    tests = tmp_path / "toytests"
    tests.mkdir()
    (tests / "test_toy.py").write_text(TESTS)
    (tmp_path / "cat.toml").write_text(CATALOGUE)
    starts = tmp_path / "starts.txt"
    monkeypatch.setenv("TOY_STARTS", str(starts))
    cfg = TargetConfig(
        name="toy",
        package="toypkg",
        tests=(str(tests),),
        pytest_args=("-p", "no:hypothesispytest"),
        files=(("toypkg/*.py", ("*",)),),
        isolation="process",
    )
    plan = engine.build_plan("toy", cfg, root, "0", catalogue_path=tmp_path / "cat.toml")
    by_key = {(m.function, m.kind, m.original, m.replacement): m for m in plan.mutants}
    wanted = [
        by_key[("countdown", "other", "n -= 1", "n += 1")],  # never ends: the worker restarts
        next(m for m in plan.mutants if m.catalogue == "TOY-1"),
        by_key[("Meter.add", "wrong-comparison", ">= 10", "> 10")],
        by_key[("untested", "wrong-comparison", "> 1", ">= 1")],
    ]
    work = tmp_path / "work"
    modules = engine.write_work_tree(plan, {m.id for m in wanted}, work, "toypkg")
    settings = driver.WorkerSettings(
        modules=modules, jobs=2, recheck="gated", timeout_constant=TIMEOUT_CONSTANT
    )
    driver.run_worker(plan, cfg, wanted, work, settings)
    assert [m.status for m in wanted] == ["timeout", "killed", "killed", "no-coverage"]
    # the session fixture started once for the baseline and the mutant that hung, and
    # once more in the restarted worker for the two after it; a fork per mutant would
    # start it once per mutant
    assert starts.read_text().splitlines() == ["start", "start"]
    records = [json.loads(line) for line in (work / "results.jsonl").read_text().splitlines()]
    events = [r["event"] for r in records]
    assert events.count("baseline") == 1 and events.count("restart") == 1
    # each mutant is decided once: the restarted worker does not run them again
    firsts = [r["id"] for r in records if r["event"] == "result" and r["pass"] == 1]
    assert sorted(firsts) == sorted(m.id for m in wanted)
