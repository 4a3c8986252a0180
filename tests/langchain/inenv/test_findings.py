"""Regression tests for the registered langchain findings
(ctxaudit/targets/langchain/findings.py).

Each runs its finding's seed-free program (``ctxaudit/targets/langchain/repro/``, plain
langchain, exit 1 when it reproduces) on the release under test and asserts that it
still reproduces, so it fails when the release is fixed. They run only for the releases
a finding is registered for (``CTXAUDIT_FINDINGS=all``: every release).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxaudit.targets.langchain import findings
from ctxaudit.targets.langchain.repro import PRELOAD, program
from tests import finding_programs
from tests.langchain.inenv.conftest import VERSION


def reproduces(finding_id: str) -> bool:
    ids = [f.id for f in findings.registered(VERSION)]
    return finding_programs.reproduces(
        finding_id, ids, program(finding_id), f"langchain {VERSION}", PRELOAD
    )


def test_every_finding_has_its_program_and_regression_test() -> None:
    for f in findings.FINDINGS:
        assert program(f.id).is_file(), f.id
        assert f.repro.split("::")[1] in globals(), f.repro


@pytest.mark.properties("C1")
def test_lc_cut_folds_tool_group() -> None:
    assert reproduces("LC-CUT-FOLDS-TOOL-GROUP"), "the tool group is kept now: fixed?"


@pytest.mark.properties("C1")
def test_lc_fold_keeps_orphan_result() -> None:
    assert reproduces("LC-FOLD-KEEPS-ORPHAN-RESULT"), "every kept result has its call: fixed?"


@pytest.mark.properties("S6")
def test_lc_trim_window_drops_summary() -> None:
    assert reproduces("LC-TRIM-WINDOW-DROPS-SUMMARY"), "the summary model is asked now: fixed?"


@pytest.mark.properties("S6", "S7")
def test_lc_summary_failure_fabricated() -> None:
    assert reproduces("LC-SUMMARY-FAILURE-FABRICATED"), "a failed summary fails now: fixed?"


@pytest.mark.properties("C1")
def test_lc_stale_report_refolds() -> None:
    assert reproduces("LC-STALE-REPORT-REFOLDS"), "no second fold on a stale report: fixed?"


@pytest.mark.properties("B3", "S6")
def test_lc_tool_limit_answers_answered_call() -> None:
    assert reproduces("LC-TOOL-LIMIT-ANSWERS-ANSWERED-CALL"), "one result per call now: fixed?"


@pytest.mark.properties("B3", "S6")
def test_lc_tool_limit_end_orphan() -> None:
    assert reproduces("LC-TOOL-LIMIT-END-ORPHAN"), "every call is answered now: fixed?"


def test_programs_are_plain_langchain() -> None:
    """A program is what an upstream report quotes: it imports nothing of ctxaudit."""
    for f in findings.FINDINGS:
        text = Path(program(f.id)).read_text()
        assert "ctxaudit" not in text.replace("ctxaudit:", "") and "model." not in text, f.id
