"""Shape coverage (ctxaudit/shapes.py): counts what ran, names every cell at 0, refuses
a cell nobody declared, and reaches findings.md as a table with its gaps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxaudit import shapes
from ctxaudit.outcomes import CouldNotCheck
from ctxaudit.target_report import TargetReport
from ctxaudit.templating import render


@pytest.fixture(autouse=True)
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shapes, "_tables", {})
    monkeypatch.setattr(shapes, "_counts", shapes.Counter())


def test_counts_what_ran_and_names_the_gaps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shapes.declare("t", ("writer", ("add", "pop")), ("when", ("before", "during")))
    shapes.reached("t", "add", "during")
    shapes.reached("t", "add", "during")
    (table,) = shapes.snapshot()
    assert table["steps"] == [[0, 2], [0, 0]]
    assert table["gaps"] == ["add × before", "pop × before", "pop × during"]
    monkeypatch.setenv("CTXAUDIT_SHAPES", str(tmp_path / "s.json"))
    shapes.dump()
    assert shapes.load(tmp_path / "s.json") == json.loads(json.dumps([table]))
    assert shapes.load(tmp_path / "none.json") == []


def test_a_cell_nobody_declared_is_refused() -> None:
    shapes.declare("t", ("writer", ("add",)), ("when", ("before",)))
    with pytest.raises(ValueError, match="no cell"):
        shapes.reached("t", "clear", "before")
    with pytest.raises(ValueError, match="no cell"):
        shapes.reached("other", "add", "before")
    with pytest.raises(ValueError, match="declared twice"):
        shapes.declare("t", ("writer", ("add", "pop")), ("when", ("before",)))


def test_findings_md_shows_each_table_and_its_gaps() -> None:
    shapes.declare("fold: holds × did", ("holds", ("late", "pending")), ("did", ("fold",)))
    shapes.reached("fold: holds × did", "late", "fold")
    report = TargetReport("ledger", "0.1.0", "ledger", "ci", 0, 1.0, 0, shapes=shapes.snapshot())
    text = render(
        "findings.md.j2", r=report, names={}, heading=str, rerun=str, reproduce=str, registry=None
    )
    section = text[text.index("## Shape coverage") :]
    assert "| late | 1 |" in section and "| pending | **0** |" in section
    assert "Gaps (1): pending × fold." in section


def test_an_absent_cell_is_no_gap_and_a_step_there_is_refused() -> None:
    shapes.declare(
        "t", ("kind", ("blocked", "plain")), ("path", ("query", "responses")),
        absent={("blocked", "query"): "the path checks no input"},
    )  # fmt: skip
    shapes.reached("t", "plain", "query")
    (table,) = shapes.snapshot()
    assert table["steps"] == [[None, 0], [1, 0]]
    assert table["gaps"] == ["blocked × responses", "plain × responses"]
    assert table["absent"] == {"the path checks no input": ["blocked × query"]}
    with pytest.raises(CouldNotCheck, match="declared absent: the path checks no input"):
        shapes.reached("t", "blocked", "query")
    with pytest.raises(ValueError, match="not in shape table"):
        shapes.declare("u", ("kind", ("a",)), ("path", ("b",)), absent={("a", "c"): "why"})
    report = TargetReport("ledger", "0.1.0", "ledger", "ci", 0, 1.0, 0, shapes=shapes.snapshot())
    text = render(
        "findings.md.j2", r=report, names={}, heading=str, rerun=str, reproduce=str, registry=None
    )
    section = text[text.index("## Shape coverage") :]
    assert "| blocked | – | **0** |" in section, section
    assert (
        "Not counted (–):" in section and "- the path checks no input: blocked × query" in section
    )
