"""End to end on a toy target: trampolines, a fork per mutant, kill, timeout, no coverage."""

from __future__ import annotations

import textwrap
from pathlib import Path

from mutation import driver, engine
from mutation.config import TargetConfig

#: seconds beyond the tests' own time before a mutant's child is a timeout: far
#: above a toy test's milliseconds on a loaded machine, so only a mutant that never
#: ends times out
TIMEOUT_CONSTANT = 8.0

TOY = """
class Meter:
    def __init__(self):
        self.total = 0

    def add(self, n):
        self.total += n
        return self.total >= 10


def countdown(n):
    while n > 0:
        n -= 1
    return n


def untested(x):
    return x > 1
"""

TESTS = """
from toypkg.meter import Meter, countdown


def test_add():
    m = Meter()
    assert m.add(4) is False
    assert m.total == 4
    assert m.add(6) is True


def test_countdown():
    assert countdown(3) == 0
"""

CATALOGUE = """
[[mutant]]
id = "TOY-1"
target = "toy"
file = "toypkg/meter.py"
function = "Meter.add"
kind = "removed-write"
property = "B1"
before = "self.total += n"
after = "pass"
"""


def toy_tree(tmp_path: Path) -> Path:
    root = tmp_path / "src"
    (root / "toypkg").mkdir(parents=True)
    (root / "toypkg" / "__init__.py").write_text("")
    (root / "toypkg" / "meter.py").write_text(textwrap.dedent(TOY))
    return root


def test_runner_end_to_end(tmp_path: Path):
    root = toy_tree(tmp_path)
    tests = tmp_path / "toytests"
    tests.mkdir()
    (tests / "test_toy.py").write_text(TESTS)
    (tmp_path / "cat.toml").write_text(CATALOGUE)
    cfg = TargetConfig(
        name="toy",
        package="toypkg",
        tests=(str(tests),),
        pytest_args=("-p", "no:hypothesispytest"),
        files=(("toypkg/*.py", ("*",)),),
    )
    plan = engine.build_plan("toy", cfg, root, "0", catalogue_path=tmp_path / "cat.toml")
    by_key = {(m.function, m.kind, m.original, m.replacement): m for m in plan.mutants}
    wanted = [
        by_key[("Meter.add", "removed-write", "self.total += n", "pass")],
        by_key[("Meter.add", "wrong-comparison", ">= 10", "> 10")],
        by_key[("countdown", "other", "n -= 1", "n += 1")],  # never ends
        by_key[("untested", "wrong-comparison", "> 1", ">= 1")],
        next(m for m in plan.mutants if m.catalogue == "TOY-1"),
    ]
    work = tmp_path / "work"
    modules = engine.write_work_tree(plan, {m.id for m in wanted}, work, "toypkg")
    settings = driver.WorkerSettings(
        modules=modules, jobs=2, recheck="none", timeout_constant=TIMEOUT_CONSTANT
    )
    driver.run_worker(plan, cfg, wanted, work, settings)
    assert [m.status for m in wanted] == ["killed", "killed", "timeout", "no-coverage", "killed"]
    assert wanted[0].killed_by and wanted[0].killed_by.endswith("test_add")


PEER_TESTS = """
from toypkg.meter import Meter


def test_add_counts():
    m = Meter()
    assert m.add(4) is False
    assert m.total == 4
"""


def test_peer_suite_runs_the_same_mutants_with_other_tests(tmp_path: Path):
    root = toy_tree(tmp_path)
    peer_root = tmp_path / "peer"
    (peer_root / "tests").mkdir(parents=True)
    (peer_root / "tests" / "test_peer.py").write_text(PEER_TESTS)
    (peer_root / "tests" / "test_broken.py").write_text("def test_needs(fixture_gone):\n    pass\n")
    cfg = TargetConfig(
        name="toy",
        package="toypkg",
        tests=("unused",),
        pytest_args=(),
        files=(("toypkg/*.py", ("*",)),),
    )
    (tmp_path / "none.toml").write_text("")
    plan = engine.build_plan("toy", cfg, root, "0", catalogue_path=tmp_path / "none.toml")
    by_key = {(m.function, m.kind, m.original, m.replacement): m for m in plan.mutants}
    wanted = [
        by_key[("Meter.add", "removed-write", "self.total += n", "pass")],
        by_key[("Meter.add", "wrong-comparison", ">= 10", "> 10")],  # the peer test misses it
        by_key[("countdown", "other", "n -= 1", "n += 1")],  # no peer test reaches it
    ]
    work = tmp_path / "work"
    modules = engine.write_work_tree(plan, {m.id for m in wanted}, work, "toypkg")
    suite = engine.PeerRun(
        name="toy's own tests",
        root=str(peer_root),
        tests=tuple(str(p) for p in sorted((peer_root / "tests").glob("test_*.py"))),
        pytest_args=("-c", "/dev/null", "--rootdir", str(peer_root), "-p", "no:hypothesispytest"),
        deselect=(),
        sys_path=(str(peer_root),),
        selection_reason="all",
    )
    settings = driver.WorkerSettings(
        modules=modules, jobs=2, recheck="none", timeout_constant=TIMEOUT_CONSTANT, suite=suite
    )
    base = driver.run_worker(plan, cfg, wanted, work, settings)
    assert [m.status for m in wanted] == ["killed", "survived", "no-coverage"]
    assert base["failing"] == ["tests/test_broken.py::test_needs"]
    assert (work / "peer-worker.log").exists() and (work / "peer-results.jsonl").exists()


def test_a_suite_that_fails_unmutated_is_named_as_such(tmp_path: Path):
    """Every test failing on the unmutated tree is not a path problem: the worker says
    the suite fails there (as on the fully fixed lightspeed-stack main, where the
    mutation profile's examples found an S7 failure), and names the tests."""
    import pytest

    from mutation.engine import MutationError

    root = toy_tree(tmp_path)
    tests = tmp_path / "toytests"
    tests.mkdir()
    (tests / "test_toy.py").write_text(
        "from toypkg.meter import Meter\n\n\ndef test_add():\n    assert Meter().add(4)\n"
    )
    cfg = TargetConfig(
        name="toy", package="toypkg", tests=(str(tests),),
        pytest_args=("-p", "no:hypothesispytest"), files=(("toypkg/*.py", ("*",)),),
    )  # fmt: skip
    plan = engine.build_plan("toy", cfg, root, "0")
    one = [next(m for m in plan.mutants if m.function == "Meter.add")]
    work = tmp_path / "work"
    modules = engine.write_work_tree(plan, {m.id for m in one}, work, "toypkg")
    settings = driver.WorkerSettings(modules=modules, jobs=1, recheck="none")
    with pytest.raises(MutationError, match=r"every test fails on the unmutated tree \(.*test_add"):
        driver.run_worker(plan, cfg, one, work, settings)


def test_a_run_restricted_to_part_of_the_suite_stays_inside_it() -> None:
    """``--tests``: files, folders' files and node ids inside the configured tests are
    taken; anything else is refused, so a run never runs tests the scope does not name."""
    import pytest

    from mutation.engine import MutationError
    from mutation.orchestrate import _part_of_suite

    suite = ("tests/lightspeed/inenv/test_programs.py", "tests/settlement")
    inside = (
        "tests/lightspeed/inenv/test_programs.py",
        "tests/lightspeed/inenv/test_programs.py::test_program",
        "tests/settlement/test_owner.py",
    )
    assert _part_of_suite(suite, inside) == inside
    for outside in ("tests/lightspeed/inenv/test_lockstep.py", "tests/settlementx/t.py",
                    "tests/lightspeed/inenv/test_programs.pyc"):  # fmt: skip
        with pytest.raises(MutationError, match="not part of the target's suite"):
            _part_of_suite(suite, (outside,))
