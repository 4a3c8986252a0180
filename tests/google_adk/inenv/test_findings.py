"""Regression tests for the registered google-adk findings
(ctxaudit/targets/google_adk/findings.py).

Each runs its finding's seed-free program (``ctxaudit/targets/google_adk/repro/``, plain
google-adk, exit 1 when it reproduces) on the release under test and asserts that it
still reproduces, so it fails when the release is fixed. They run only for the releases
a finding is registered for (``CTXAUDIT_FINDINGS=all``: every release).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxaudit.targets.google_adk import findings
from ctxaudit.targets.google_adk.repro import PRELOAD, program
from tests import finding_programs
from tests.google_adk.inenv.conftest import VERSION


def reproduces(finding_id: str) -> bool:
    ids = [f.id for f in findings.registered(VERSION)]
    return finding_programs.reproduces(
        finding_id, ids, program(finding_id), f"google-adk {VERSION}", PRELOAD
    )


def test_every_finding_has_its_program_and_regression_test() -> None:
    for f in findings.FINDINGS:
        assert program(f.id).is_file(), f.id
        assert f.repro.split("::")[1] in globals(), f.repro


@pytest.mark.properties("S6")
def test_adk_db_same_time_reordered() -> None:
    assert reproduces("ADK-DB-SAME-TIME-REORDERED"), (
        "the database service reads same-time events in the append order now: fixed?"
    )


@pytest.mark.properties("S2")
def test_adk_db_zero_recent_reads_all() -> None:
    assert reproduces("ADK-DB-ZERO-RECENT-READS-ALL"), (
        "the database service reads no event for num_recent_events=0 now: fixed?"
    )


def test_programs_are_plain_google_adk() -> None:
    """A program is what an upstream report quotes: it imports nothing of ctxaudit."""
    for f in findings.FINDINGS:
        text = Path(program(f.id)).read_text()
        assert "ctxaudit" not in text and "model." not in text, f.id
