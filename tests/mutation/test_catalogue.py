"""Catalogue entries apply exactly, or fail loudly."""

from __future__ import annotations

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
