"""Shape coverage: which shapes of input a lockstep's steps reached, counted as they ran.

A lockstep declares its shape tables when it is imported: each a grid of two
dimensions (the message graph a step met by the keep setting it ran under, a writer by
the moment it wrote ...), every value of each named up front. Each step that ran
outside the known findings' regions counts once in the cell it reached
(:func:`reached`). What is counted is what ran, never what the strategies could draw:
a cell at 0 is a gap, and the report names it.

A cell no input can reach (a request kind a path does not take: no shield on a path
that checks no input) is declared absent, with the reason: the report shows it as
such, never as a gap, and a step that reaches it is refused, so the reason is checked
on every step rather than believed.

The counts of one pytest process are written at its end to ``CTXAUDIT_SHAPES`` when
that is set (:func:`dump`, from ctxaudit's pytest plugin); the audit reads them into
the target's report (:func:`load`).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Table:
    """One shape table: rows of one dimension by columns of another."""

    name: str
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    row_label: str
    column_label: str
    #: the cells no input can reach: (row, column) -> why
    absent: tuple[tuple[tuple[str, str], str], ...] = ()

    def why_absent(self, row: str, column: str) -> str | None:
        return dict(self.absent).get((row, column))


_tables: dict[str, Table] = {}
_counts: Counter[tuple[str, str, str]] = Counter()


def declare(
    name: str,
    rows: tuple[str, Sequence[str]],
    columns: tuple[str, Sequence[str]],
    absent: Mapping[tuple[str, str], str] | None = None,
) -> None:
    """Declare the table ``name``: ``(label, values)`` of its rows and of its columns,
    and the cells no input can reach (``absent``: (row, column) -> why)."""
    table = Table(
        name, tuple(rows[1]), tuple(columns[1]), rows[0], columns[0],
        tuple(sorted((absent or {}).items())),
    )  # fmt: skip
    unknown = [cell for cell, _ in table.absent if cell[0] not in table.rows or
               cell[1] not in table.columns]  # fmt: skip
    if unknown:
        raise ValueError(f"absent cells {unknown} are not in shape table {name!r}")
    if _tables.setdefault(name, table) != table:
        raise ValueError(f"shape table {name!r} declared twice, differently")


def reached(name: str, row: str, column: str) -> None:
    """One step reached the cell (``row``, ``column``) of the table ``name``."""
    table = _tables.get(name)
    if table is None or row not in table.rows or column not in table.columns:
        raise ValueError(f"no cell ({row!r}, {column!r}) in shape table {name!r}")
    why = table.why_absent(row, column)
    if why is not None:  # the suite drew what it says no input can: its own error
        from ctxaudit.outcomes import CouldNotCheck

        raise CouldNotCheck(
            f"a step reached ({row!r}, {column!r}) in shape table {name!r}, declared absent: {why}"
        )
    _counts[(name, row, column)] += 1


def snapshot() -> list[dict[str, Any]]:
    """Every declared table with its counts, in declaration order."""
    return [
        {
            "name": t.name,
            "row_label": t.row_label,
            "column_label": t.column_label,
            "rows": list(t.rows),
            "columns": list(t.columns),
            # an absent cell: None
            "steps": [
                [None if t.why_absent(r, c) else _counts[(t.name, r, c)] for c in t.columns]
                for r in t.rows
            ],
            "gaps": [
                f"{r} × {c}"
                for r in t.rows
                for c in t.columns
                if not _counts[(t.name, r, c)] and not t.why_absent(r, c)
            ],
            # why -> the cells it makes absent, in the table's order
            "absent": {
                why: [f"{r} × {c}" for r in t.rows for c in t.columns if t.why_absent(r, c) == why]
                for why in dict.fromkeys(w for _, w in t.absent)
            },
        }
        for t in _tables.values()
    ]


def dump() -> None:
    """Write :func:`snapshot` to ``CTXAUDIT_SHAPES``, when it is set and a table was
    declared."""
    path = os.environ.get("CTXAUDIT_SHAPES")
    if not path or not _tables:
        return
    from ctxaudit import atomic

    atomic.write_text(Path(path), json.dumps(snapshot(), indent=1))


def load(path: Path) -> list[dict[str, Any]]:
    """The tables a suite process wrote (none when it wrote nothing)."""
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []
