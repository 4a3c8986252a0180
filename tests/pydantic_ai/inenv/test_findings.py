"""Regression tests for the registered pydantic-ai findings
(ctxaudit/targets/pydantic_ai/findings.py).

Each runs its finding's seed-free program (``ctxaudit/targets/pydantic_ai/repro/``, plain
pydantic-ai, exit 1 when it reproduces) on the release under test and asserts that it
still reproduces, so it fails when the release is fixed. They run only for the releases
a finding is registered for (``CTXAUDIT_FINDINGS=all``: every release).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxaudit.targets.pydantic_ai import findings
from ctxaudit.targets.pydantic_ai.repro import PRELOAD, program
from tests import finding_programs
from tests.pydantic_ai.inenv.conftest import VERSION


def reproduces(finding_id: str) -> bool:
    ids = [f.id for f in findings.registered(VERSION)]
    return finding_programs.reproduces(
        finding_id, ids, program(finding_id), f"pydantic-ai {VERSION}", PRELOAD
    )


def test_every_finding_has_its_program_and_regression_test() -> None:
    for f in findings.FINDINGS:
        assert program(f.id).is_file(), f.id
        assert f.repro.split("::")[1] in globals(), f.repro


@pytest.mark.properties("B2")
def test_pai_per_request_reads_chain_sum() -> None:
    assert reproduces("PAI-PER-REQUEST-READS-CHAIN-SUM"), (
        "a chain of small requests passes now: fixed?"
    )


@pytest.mark.properties("B3")
def test_pai_precheck_skips_output() -> None:
    assert reproduces("PAI-PRECHECK-SKIPS-OUTPUT"), "no request past the output limit: fixed?"


@pytest.mark.properties("B1")
def test_pai_stopped_chain_unmetered() -> None:
    assert reproduces("PAI-STOPPED-CHAIN-UNMETERED"), "the stopped response is metered now: fixed?"


@pytest.mark.properties("B3")
def test_pai_first_segment_unchecked() -> None:
    assert reproduces("PAI-FIRST-SEGMENT-UNCHECKED"), "no continuation past a limit: fixed?"


def test_programs_are_plain_pydantic_ai() -> None:
    """A program is what an upstream report quotes: it imports nothing of ctxaudit."""
    for f in findings.FINDINGS:
        text = Path(program(f.id)).read_text()
        assert "ctxaudit" not in text and "model." not in text, f.id
