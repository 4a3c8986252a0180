"""The release-audit matrix: every audited target version side by side.

Reads what the audit wrote per target version (``reports/<target>-<version>/``:
``findings.json`` and, when mutation ran, ``mutation.json`` / ``mutation.md``)
and writes two views of the same :class:`Matrix`:

- ``matrix.md``: the verdict grid per target (rows = properties, columns =
  versions), known findings x versions, what changed between consecutive
  versions, and per version its findings with their minimal reproductions and
  its mutation score per kind;
- ``matrix.html``: one static page (inline CSS and SVG, no script, no external
  resource) with the same content, a summary line for a release manager and a
  chart of failing properties, known findings and mutation score per version.

The data is :mod:`ctxaudit.matrix.model`; the words :mod:`ctxaudit.matrix.view`;
the chart's geometry :mod:`ctxaudit.matrix.chart`; the layout the templates
``ctxaudit/templates/matrix.md.j2`` and ``matrix.html.j2`` (and their partials).

Python API (what ``ctxaudit audit`` calls)::

    from ctxaudit import matrix
    m = matrix.build(sorted(Path("reports").glob("*/findings.json")))  # dirs or files
    md, html = matrix.write(m, Path("reports"))

Command line: ``python -m ctxaudit.matrix REPORTS_DIR [--out DIR]``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path

from markupsafe import Markup

from ctxaudit import atomic, procs
from ctxaudit.matrix.chart import chart_svg
from ctxaudit.matrix.model import (
    COULD_NOT_CHECK,
    FAILS,
    HOLDS,
    KIND_ORDER,
    MARKS,
    MTE_TO_STATUS,
    NOT_CHECKED,
    Change,
    KindScore,
    KnownFinding,
    KnownRow,
    Matrix,
    MatrixError,
    MutationSummary,
    NewFinding,
    Skipped,
    Unchecked,
    VersionReport,
    build,
    diff,
    kind_of,
    load_mutation,
    load_version,
    scores,
    version_key,
)
from ctxaudit.matrix.view import View, summary_lines
from ctxaudit.templating import render

__all__ = [
    "COULD_NOT_CHECK",
    "FAILS",
    "HOLDS",
    "KIND_ORDER",
    "MARKS",
    "MTE_TO_STATUS",
    "NOT_CHECKED",
    "Change",
    "KindScore",
    "KnownFinding",
    "KnownRow",
    "Matrix",
    "MatrixError",
    "MutationSummary",
    "NewFinding",
    "Skipped",
    "Unchecked",
    "VersionReport",
    "build",
    "chart_svg",
    "diff",
    "find_reports",
    "kind_of",
    "load_mutation",
    "load_version",
    "main",
    "scores",
    "summary_lines",
    "to_html",
    "to_markdown",
    "version_key",
    "write",
]


def to_markdown(m: Matrix, out_dir: Path) -> str:
    """matrix.md; links to each version's reports are relative to ``out_dir``."""
    return render("matrix.md.j2", view=View(m, out_dir)).rstrip() + "\n"


def to_html(m: Matrix, out_dir: Path) -> str:
    """matrix.html; links to each version's reports are relative to ``out_dir``."""
    return render("matrix.html.j2", view=View(m, out_dir), chart=Markup(chart_svg(m)))


def write(matrix: Matrix, out_dir: Path, pause: bool = True) -> tuple[Path, Path]:
    """Write ``out_dir/matrix.md`` and ``out_dir/matrix.html`` (each whole or not at all:
    ``ctxaudit/atomic.py``); links to each version's reports are relative to ``out_dir``.
    ``pause``: the fault-injection point between the two (``procs.pause``)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    md = out_dir / "matrix.md"
    page = out_dir / "matrix.html"
    atomic.write_text(md, to_markdown(matrix, out_dir))
    if pause:
        procs.pause("matrix-write")
    atomic.write_text(page, to_html(matrix, out_dir))
    return md, page


def find_reports(reports_dir: Path) -> list[Path]:
    return sorted(p.parent for p in reports_dir.glob("*/findings.json"))


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ctxaudit.matrix",
        description="Write matrix.md and matrix.html from REPORTS_DIR/*/findings.json.",
    )
    parser.add_argument("reports_dir", type=Path, metavar="REPORTS_DIR")
    parser.add_argument("--out", type=Path, help="output folder (default: REPORTS_DIR)")
    args = parser.parse_args(None if argv is None else list(argv))
    dirs = find_reports(args.reports_dir)
    if not dirs:
        print(f"ctxaudit.matrix: no */findings.json under {args.reports_dir}", file=sys.stderr)
        return 2
    matrix = build(dirs)
    skipped = "; ".join(f"{s.dir.name}/{s.file}: {s.why}" for s in matrix.skipped)
    if not matrix.versions:
        print(f"ctxaudit.matrix: no readable report under {args.reports_dir}: {skipped}",
              file=sys.stderr)  # fmt: skip
        return 2
    if skipped:  # one line for all of them
        print(f"ctxaudit.matrix: skipped {len(matrix.skipped)}: {skipped}", file=sys.stderr)
    md, page = write(matrix, args.out or args.reports_dir)
    print(f"{md}\n{page}")
    return 0
