"""End to end on a toy target: trampolines, a fork per mutant, kill, timeout, no coverage."""

from __future__ import annotations

import textwrap
from pathlib import Path

from mutation import engine
from mutation.config import TargetConfig

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


def test_runner_end_to_end(tmp_path: Path):
    root = tmp_path / "src"
    (root / "toypkg").mkdir(parents=True)
    (root / "toypkg" / "__init__.py").write_text("")
    (root / "toypkg" / "meter.py").write_text(textwrap.dedent(TOY))
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
    engine.run_worker(
        plan, cfg, wanted, work, "", jobs=2, recheck="none", progress=None,
        modules=modules, timeout_constant=1.0,
    )  # fmt: skip
    assert [m.status for m in wanted] == ["killed", "killed", "timeout", "no-coverage", "killed"]
    assert wanted[0].killed_by and wanted[0].killed_by.endswith("test_add")
