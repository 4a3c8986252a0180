"""Golden files: every report rendered from fixed inputs (golden_inputs.py) must equal
its file in tests/audit/golden/. After an intended change of a report, rewrite them with

    CTXAUDIT_UPDATE_GOLDEN=1 bin/ctxaudit test tests/audit/test_golden.py

and read the diff before committing it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxaudit import audit, matrix
from mutation import report
from tests.audit import golden_inputs as inputs

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("CTXAUDIT_UPDATE_GOLDEN") == "1"


def _check(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_text(text)
    assert path.exists(), f"{path} missing: run with CTXAUDIT_UPDATE_GOLDEN=1"
    assert text == path.read_text(), f"{name} differs from its golden file"


@pytest.mark.parametrize("name", sorted(inputs.findings_reports()))
def test_findings_md(name: str) -> None:
    _check(name, audit.render_markdown(inputs.findings_reports()[name]))


@pytest.mark.parametrize("name", sorted(inputs.mutation_docs()))
def test_mutation_md(name: str) -> None:
    _check(name, report.to_markdown(inputs.mutation_docs()[name]))


def test_matrix_md_and_html(tmp_path: Path) -> None:
    reports = inputs.matrix_reports(tmp_path)
    md, page = matrix.write(matrix.build(matrix.find_reports(reports)), reports)
    _check("matrix.md", md.read_text())
    _check("matrix.html", page.read_text())


def test_audit_time_md() -> None:
    _check("audit-time.md", inputs.audit_time().markdown())
