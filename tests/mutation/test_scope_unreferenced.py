"""Exclusions of dead code (``[[<target>.exclude]] unreferenced = true``): a function is
left out only in a version whose source never names it outside its own ``def`` line, and
the report says how many mutants that left out; where anything calls it, it is mutated
(lightspeed-stack's ``store_compacted_turn``: called by the 0.6 line's endpoints, by
nothing in main's and the 0.7 line's)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mutation import engine
from mutation.config import ConfigError, load_targets, unreferenced

TOY = """
[toy]
package = "pkg"
tests = ["tests"]

[[toy.files]]
path = "pkg/m.py"
functions = ["store", "run"]

[[toy.exclude]]
function = "store"
unreferenced = true
reason = "nothing calls store in this version"
"""

MODULE = """
async def store(client, turn):
    await client.write(turn)


def run(n):
    return n > 0
"""


def _tree(tmp_path: Path, caller: str | None) -> Path:
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "m.py").write_text(MODULE)
    if caller is not None:
        (src / "app.py").write_text(caller)
    return src


def _plan(tmp_path: Path, caller: str | None) -> engine.Plan:
    (tmp_path / "targets.toml").write_text(TOY)
    (tmp_path / "catalogue.toml").write_text("")
    cfg = load_targets(tmp_path / "targets.toml")["toy"]
    src = _tree(tmp_path, caller)
    return engine.build_plan("toy", cfg, src, "1", tmp_path / "catalogue.toml")


@pytest.mark.parametrize(
    ("caller", "dead"),
    [
        (None, {"store"}),
        ("from pkg.m import store\n", set()),
        ("import pkg.m\n\nasync def go(c):\n    await pkg.m.store(c, 1)\n", set()),
        ("# store is called by the scheduler\n", set()),  # any mention keeps it
        ("def store_all():\n    pass\n", {"store"}),  # another name
    ],
)
def test_a_function_is_dead_only_when_nothing_names_it(
    tmp_path: Path, caller: str | None, dead: set[str]
) -> None:
    assert unreferenced(_tree(tmp_path, caller), ["store", "run"]) == dead | {"run"}


def test_the_plan_leaves_dead_code_out_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "dead").mkdir()
    (tmp_path / "live").mkdir()
    dead = _plan(tmp_path / "dead", None)
    live = _plan(tmp_path / "live", "from pkg.m import store\n")
    assert {m.function for m in dead.mutants} == {"run"}
    assert dead.excluded.get("nothing calls store in this version", 0) > 0
    assert {"store", "run"} <= {m.function for m in live.mutants}
    assert "nothing calls store in this version" not in live.excluded


def test_an_unreferenced_exclusion_names_one_function(tmp_path: Path) -> None:
    for bad in ('function = "sto*"', "unreferenced = 1"):
        text = (
            TOY.replace('function = "store"', bad)
            if "sto" in bad
            else TOY.replace("unreferenced = true", bad)
        )
        (tmp_path / "targets.toml").write_text(text)
        with pytest.raises(ConfigError):
            load_targets(tmp_path / "targets.toml")


def test_an_absent_exclusion_applies_where_the_file_is_missing(tmp_path: Path) -> None:
    """``absent = PATH``: ``store`` is left out of a version without ``PATH`` (what reaches
    it there is missing), and mutated in one that has it."""
    toy = TOY.replace("unreferenced = true", 'absent = "pkg/guard.py"').replace(
        "nothing calls store in this version", "only the guard reaches store"
    )
    plans = {}
    for name, guard in (("without", False), ("with", True)):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "targets.toml").write_text(toy)
        (folder / "catalogue.toml").write_text("")
        cfg = load_targets(folder / "targets.toml")["toy"]
        src = _tree(folder, "from pkg.m import store\n")
        if guard:
            (src / "pkg" / "guard.py").write_text("")
        plans[name] = engine.build_plan("toy", cfg, src, "1", folder / "catalogue.toml")
    assert {m.function for m in plans["without"].mutants} == {"run"}
    assert plans["without"].excluded.get("only the guard reaches store", 0) > 0
    assert {"store", "run"} <= {m.function for m in plans["with"].mutants}
    (tmp_path / "targets.toml").write_text(toy.replace('function = "store"', 'function = "s*"'))
    with pytest.raises(ConfigError):
        load_targets(tmp_path / "targets.toml")
