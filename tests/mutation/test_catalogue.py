"""Catalogue entries apply exactly, or fail loudly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mutation import catalogue
from mutation.catalogue import CatalogueError, Entry

SRC = """\
class Meter:
    def add(self, n):
        self.total += n
        return self.total > 10

    def reset(self):
        self.total = 0


def other(n):
    return n > 10
"""


def entry(**kw: object) -> Entry:
    base: dict[str, object] = dict(
        id="T-1",
        target="toy",
        file="toy.py",
        function="Meter.add",
        kind="wrong-comparison",
        property="B2",
        before="return self.total > 10",
        after="return self.total >= 10",
    )
    base.update(kw)
    return Entry(**base)  # type: ignore[arg-type]


def test_apply_changes_exactly_one_line():
    out = catalogue.apply(entry(), SRC)
    assert out == SRC.replace("self.total > 10", "self.total >= 10")


def test_multi_line_after_keeps_indentation():
    e = entry(before="self.total += n", after="self.total += n\nself.total += n", kind="other")
    out = catalogue.apply(e, SRC)
    assert "        self.total += n\n        self.total += n\n" in out


def test_entry_that_no_longer_applies_raises():
    with pytest.raises(CatalogueError, match="does not apply"):
        catalogue.apply(entry(before="return self.total > 11"), SRC)


def test_before_outside_the_function_does_not_count():
    with pytest.raises(CatalogueError, match="does not apply"):
        catalogue.apply(entry(function="Meter.reset"), SRC)


def test_unknown_function_raises():
    with pytest.raises(CatalogueError, match="no function"):
        catalogue.apply(entry(function="Meter.gone"), SRC)


def test_ambiguous_before_raises():
    src = SRC.replace("return self.total > 10", "x = 1\n        x = 1\n        return 1")
    with pytest.raises(CatalogueError, match="matches 2 times"):
        catalogue.apply(entry(before="x = 1", after="x = 2"), src)
    assert "x = 2" in catalogue.apply(entry(before="x = 1", after="x = 2", occurrence=2), src)


def test_change_that_does_not_parse_raises():
    with pytest.raises(CatalogueError, match="does not parse"):
        catalogue.apply(entry(after="return self.total >"), SRC)


def test_loader_rejects_bad_entries(tmp_path: Path):
    f = tmp_path / "c.toml"
    f.write_text('[[mutant]]\nid = "X"\ntarget = "ledger"\n')
    with pytest.raises(CatalogueError, match="missing"):
        catalogue.load(f)
    f.write_text(
        '[[mutant]]\nid="X"\ntarget="t"\nfile="f.py"\nfunction="g"\nkind="typo"\n'
        'property="S1"\nbefore="a"\nafter="b"\n'
    )
    with pytest.raises(CatalogueError, match="kind"):
        catalogue.load(f)


def test_versions_gate_applicability():
    e = entry(versions=">=0.15.0")
    assert e.applies_to_version("0.17.1")
    assert not e.applies_to_version("0.14.0")


ROOTS = {
    "ledger": Path(__file__).resolve().parents[2],
}


def test_every_ledger_entry_applies_to_the_ledger_source():
    for e in catalogue.load(target="ledger"):
        catalogue.apply(e, (ROOTS["ledger"] / e.file).read_text())


def test_gr_gap_062_applies_to_the_pinned_gitreins():
    import engine

    root = Path(engine.__file__).resolve().parents[1]
    (e,) = [e for e in catalogue.load(target="gitreins") if e.id == "GR-GAP-062"]
    out = catalogue.apply(e, (root / e.file).read_text())
    assert "if cumulative_prompt_tok > threshold:" in out


# -- a named mutant that no longer applies: information on a developer's tree, an error
# on a registered version (the rule: mutation/catalogue.py's docstring)

TOY = """\
class Store:
    def save(self, turn):
        self.turns.append(turn)
        return len(self.turns) > 3

    def drop(self):
        self.turns.clear()
"""

TOY_CATALOGUE = """\
[[mutant]]
id = "TOY-WRITE"
target = "toy"
file = "toypkg/store.py"
function = "Store.save"
kind = "removed-write"
property = "S6"
before = "self.turns.append(turn)"
after = "pass"

[[mutant]]
id = "TOY-CMP"
target = "toy"
file = "toypkg/store.py"
function = "Store.save"
kind = "wrong-comparison"
property = "B2"
before = "return len(self.turns) > 3"
after = "return len(self.turns) >= 3"
"""


def toy_target(tmp_path: Path, source: str) -> tuple[Path, object, Path]:
    from mutation.config import TargetConfig

    root = tmp_path / "tree"
    (root / "toypkg").mkdir(parents=True)
    (root / "toypkg" / "__init__.py").write_text("")
    (root / "toypkg" / "store.py").write_text(source)
    cat = tmp_path / "cat.toml"
    cat.write_text(TOY_CATALOGUE)
    cfg = TargetConfig(
        name="toy", package="toypkg", tests=(), pytest_args=(),
        files=(("toypkg/*.py", ("*",)),),
    )  # fmt: skip
    return root, cfg, cat


def test_removed_write_on_a_developers_tree_is_reported_not_raised(tmp_path: Path):
    from mutation import engine

    # the developer's change removed the very write TOY-WRITE mutates
    root, cfg, cat = toy_target(tmp_path, TOY.replace("        self.turns.append(turn)\n", ""))
    plan = engine.build_plan("toy", cfg, root, "0", cat, developer=True)  # type: ignore[arg-type]
    assert [g["id"] for g in plan.no_longer_applies] == ["TOY-WRITE"]
    (gone,) = plan.no_longer_applies
    assert gone["reason"].startswith(
        "no longer applies: `before` not found in toypkg/store.py:Store.save - the code it "
        "mutates changed or is gone; if the write it stands for was removed, the properties"
    )
    ids = [m.id for m in plan.mutants]
    assert "catalogue:TOY-CMP" in ids and "catalogue:TOY-WRITE" not in ids
    assert any(not i.startswith("catalogue:") for i in ids)  # the rest of the plan is there


def test_function_or_file_gone_from_a_developers_tree_is_reported(tmp_path: Path):
    from mutation import engine

    root, cfg, cat = toy_target(tmp_path, TOY.replace("def save(self, turn)", "def put(self, t)"))
    plan = engine.build_plan("toy", cfg, root, "0", cat, developer=True)  # type: ignore[arg-type]
    assert sorted(g["id"] for g in plan.no_longer_applies) == ["TOY-CMP", "TOY-WRITE"]
    assert "no function Store.save in toypkg/store.py" in plan.no_longer_applies[0]["reason"]
    (root / "toypkg" / "store.py").rename(root / "toypkg" / "other.py")
    plan = engine.build_plan("toy", cfg, root, "0", cat, developer=True)  # type: ignore[arg-type]
    assert [g["reason"].split(" - ")[0] for g in plan.no_longer_applies] == [
        "no longer applies: toypkg/store.py is gone"
    ] * 2


def test_entry_that_does_not_apply_to_a_registered_version_stays_an_error(tmp_path: Path):
    from mutation import engine

    root, cfg, cat = toy_target(tmp_path, TOY.replace("        self.turns.append(turn)\n", ""))
    with pytest.raises(CatalogueError, match="registered version.*fix the entry"):
        engine.build_plan("toy", cfg, root, "0", cat)  # type: ignore[arg-type]


def test_other_failures_stay_errors_on_a_developers_tree(tmp_path: Path):
    from mutation import engine

    # `before` now matches twice: the catalogue cannot tell which one, on any tree
    twice = TOY.replace(
        "        self.turns.append(turn)\n", "        self.turns.append(turn)\n" * 2
    )
    root, cfg, cat = toy_target(tmp_path, twice)
    with pytest.raises(CatalogueError, match="matches 2 times"):
        engine.build_plan("toy", cfg, root, "0", cat, developer=True)  # type: ignore[arg-type]


def test_no_longer_applies_is_its_own_line_in_both_reports(tmp_path: Path):
    from mutation import engine, report

    root, cfg, cat = toy_target(tmp_path, TOY.replace("        self.turns.append(turn)\n", ""))
    plan = engine.build_plan("toy", cfg, root, "0", cat, developer=True)  # type: ignore[arg-type]
    doc = {
        "target": "toy", "version": "0", "root": str(root),
        "sources": {"toypkg/store.py": plan.files["toypkg/store.py"].source},
        "mutants": [], "timings": {"total": 1.0}, "not_applicable": [], "excluded": {},
        "no_longer_applies": plan.no_longer_applies,
    }  # fmt: skip
    doc = report.apply_gate(doc, {})
    assert doc["gate"]["passed"]  # not a gate failure by itself
    js, md = report.write_reports(doc, tmp_path / "out")
    assert f"- TOY-WRITE: {plan.no_longer_applies[0]['reason']}\n" in md.read_text()
    got = json.loads(js.read_text())["config"]["catalogue_no_longer_applies"]
    assert [g["id"] for g in got] == ["TOY-WRITE"]


def test_which_trees_are_a_developers():
    from ctxaudit import targets
    from mutation.orchestrate import developer_tree

    gitreins = targets.get("gitreins")
    pinned = gitreins.resolve("")
    assert not developer_tree(pinned)  # a release: the catalogue's own versions
    assert developer_tree(gitreins.resolve(str(pinned.root)))  # the same code, given as a path
    assert developer_tree(targets.get("ledger").resolve(""))  # this repository's code


# -- `where`: an entry names the trees it is for by their code


def test_where_not_matching_is_not_applicable_with_the_reason(tmp_path: Path) -> None:
    from mutation import engine

    root, cfg, cat = toy_target(tmp_path, TOY)
    cat.write_text(TOY_CATALOGUE.replace('after = "pass"', 'after = "pass"\nwhere = "def flush"'))
    plan = engine.build_plan("toy", cfg, root, "0", cat)  # type: ignore[arg-type]
    (na,) = plan.not_applicable
    assert na["id"] == "TOY-WRITE" and na["where"] == "def flush"
    assert na["reason"] == "toypkg/store.py has no code matching `where` 'def flush'"
    ids = [m.id for m in plan.mutants]
    assert "catalogue:TOY-WRITE" not in ids and "catalogue:TOY-CMP" in ids
    # the tree that has the code: the entry applies (MULTILINE: `^` at a line's start)
    (root / "toypkg" / "store.py").write_text(TOY + "\n    def flush(self):\n        pass\n")
    cat.write_text(
        TOY_CATALOGUE.replace('after = "pass"', 'after = "pass"\nwhere = "^ +def flush"')
    )
    plan = engine.build_plan("toy", cfg, root, "0", cat)  # type: ignore[arg-type]
    assert plan.not_applicable == [] and "catalogue:TOY-WRITE" in [m.id for m in plan.mutants]


def test_where_not_applicable_prints_its_reason(tmp_path: Path) -> None:
    from mutation import report

    na = {"id": "TOY-WRITE", "where": "x", "reason": "toypkg/store.py has no code matching"}
    doc = {
        "target": "toy", "version": "main-g1", "root": str(tmp_path), "sources": {},
        "mutants": [], "timings": {"total": 1.0}, "not_applicable": [na], "excluded": {},
    }  # fmt: skip
    _js, md = report.write_reports(report.apply_gate(doc, {}), tmp_path / "out")
    assert "- TOY-WRITE: not applicable to main-g1 (toypkg/store.py has no code matching)\n" in (
        md.read_text()
    )


def test_where_matching_with_before_missing_stays_an_error(tmp_path: Path) -> None:
    from mutation import engine

    gone = TOY.replace("        self.turns.append(turn)\n", "")
    root, cfg, cat = toy_target(tmp_path, gone)
    cat.write_text(TOY_CATALOGUE.replace('after = "pass"', 'after = "pass"\nwhere = "def save"'))
    with pytest.raises(CatalogueError, match="TOY-WRITE.*registered version"):
        engine.build_plan("toy", cfg, root, "0", cat)  # type: ignore[arg-type]


def test_where_is_checked_when_loaded(tmp_path: Path) -> None:
    f = tmp_path / "c.toml"
    f.write_text(TOY_CATALOGUE.replace('after = "pass"', 'after = "pass"\nwhere = "("'))
    with pytest.raises(CatalogueError, match="TOY-WRITE: bad where"):
        catalogue.load(f)


def test_source_with_syntax_newer_than_this_interpreter_applies() -> None:
    # a target tree may be written for a newer Python (lightspeed-stack main's
    # `type X = ...` statements under this 3.11 interpreter)
    src = "type Turn = dict[str, str]\n\n\n" + SRC
    out = catalogue.apply(entry(), src)
    assert out == src.replace("self.total > 10", "self.total >= 10")
