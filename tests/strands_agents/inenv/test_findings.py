"""Regression tests for the registered strands-agents findings
(ctxaudit/targets/strands_agents/findings.py).

Each runs its finding's seed-free program (``ctxaudit/targets/strands_agents/repro/``,
plain strands-agents, exit 1 when it reproduces) on the release under test and asserts
that it still reproduces, so it fails when the release is fixed. They run only for the
releases a finding is registered for (``CTXAUDIT_FINDINGS=all``: every release).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxaudit.targets.strands_agents import findings
from ctxaudit.targets.strands_agents.repro import PRELOAD, program
from tests import finding_programs
from tests.strands_agents.inenv.conftest import VERSION


def reproduces(finding_id: str) -> bool:
    ids = [f.id for f in findings.registered(VERSION)]
    return finding_programs.reproduces(
        finding_id, ids, program(finding_id), f"strands-agents {VERSION}", PRELOAD
    )


def test_every_finding_has_its_program_and_regression_test() -> None:
    for f in findings.FINDINGS:
        assert program(f.id).is_file(), f.id
        assert f.repro.split("::")[1] in globals(), f.repro


@pytest.mark.properties("S2")
def test_sa_summary_pin_restore() -> None:
    assert reproduces("SA-SUMMARY-PIN-RESTORE"), (
        "a restore after a fold under pin_first gives back the conversation the agent had "
        "now: fixed?"
    )


@pytest.mark.properties("S2")
def test_sa_window_pin_restore() -> None:
    assert reproduces("SA-WINDOW-PIN-RESTORE"), (
        "a restore after a trim under pin_first gives back the conversation the agent had "
        "now: fixed?"
    )


@pytest.mark.properties("S2")
def test_sa_failed_summary_skips_restore() -> None:
    assert reproduces("SA-FAILED-SUMMARY-SKIPS-RESTORE"), (
        "a restore after a failed summary gives back the conversation the agent had now: fixed?"
    )


@pytest.mark.properties("C1")
def test_sa_fold_takes_recent() -> None:
    assert reproduces("SA-FOLD-TAKES-RECENT"), (
        "a fold keeps the newest preserve_recent_messages messages: fixed?"
    )


@pytest.mark.properties("S2")
def test_sa_retried_redaction_not_stored() -> None:
    assert reproduces("SA-RETRIED-REDACTION-NOT-STORED"), (
        "a restore after a guardrail redacted a retried prompt gives back both copies "
        "redacted now: fixed?"
    )


@pytest.mark.properties("S6")
def test_sa_pins_fewer_than_pin_first() -> None:
    assert reproduces("SA-PINS-FEWER-THAN-PIN-FIRST"), (
        "a manager pins the first pin_first messages however few it held at its first try: fixed?"
    )


def test_programs_are_plain_strands_agents() -> None:
    """A program is what an upstream report quotes: it imports nothing of ctxaudit."""
    for f in findings.FINDINGS:
        text = Path(program(f.id)).read_text()
        assert "ctxaudit" not in text and "model." not in text, f.id
