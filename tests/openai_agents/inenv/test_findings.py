"""Regression tests for the registered openai-agents findings
(ctxaudit/targets/openai_agents/findings.py).

Each runs its finding's seed-free program (``ctxaudit/targets/openai_agents/repro/``,
plain openai-agents, exit 1 when it reproduces) on the release under test and asserts
that it still reproduces, so it fails when the release is fixed. They run only for the
releases a finding is registered for (``CTXAUDIT_FINDINGS=all``: every release).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxaudit.targets.openai_agents import findings
from ctxaudit.targets.openai_agents.repro import PRELOAD, program
from tests import finding_programs
from tests.openai_agents.inenv.conftest import VERSION


def reproduces(finding_id: str) -> bool:
    ids = [f.id for f in findings.registered(VERSION)]
    return finding_programs.reproduces(
        finding_id, ids, program(finding_id), f"openai-agents {VERSION}", PRELOAD
    )


def test_every_finding_has_its_program_and_regression_test() -> None:
    for f in findings.FINDINGS:
        assert program(f.id).is_file(), f.id
        assert f.repro.split("::")[1] in globals(), f.repro


@pytest.mark.properties("S6", "C1")
def test_oa_window_hides_history() -> None:
    assert reproduces("OA-WINDOW-HIDES-HISTORY"), "the whole history is compacted now: fixed?"


@pytest.mark.properties("S6", "C1")
def test_oa_hook_asked_over_window() -> None:
    assert reproduces("OA-HOOK-ASKED-OVER-WINDOW"), "the suffix compaction runs now: fixed?"


@pytest.mark.properties("C1")
def test_oa_window_sends_orphan_output() -> None:
    assert reproduces("OA-WINDOW-SENDS-ORPHAN-OUTPUT"), "the orphan is pruned now: fixed?"


@pytest.mark.properties("S3", "S6")
def test_oa_append_during_compaction_lost() -> None:
    assert reproduces("OA-APPEND-DURING-COMPACTION-LOST"), "the late append is kept now: fixed?"


@pytest.mark.properties("S3", "S6")
def test_oa_manual_compaction_loses_writes() -> None:
    assert reproduces("OA-MANUAL-COMPACTION-LOSES-WRITES"), "the late append is kept now: fixed?"


@pytest.mark.properties("S3", "S6")
def test_oa_kept_session_misses_store_writes() -> None:
    assert reproduces("OA-KEPT-SESSION-MISSES-STORE-WRITES"), "the store write is kept: fixed?"


@pytest.mark.properties("S3", "S6")
def test_oa_wrapper_write_during_compaction_lost() -> None:
    assert reproduces("OA-WRAPPER-WRITE-DURING-COMPACTION-LOST"), "the write is kept: fixed?"


@pytest.mark.properties("S9")
def test_oa_compaction_failure_fails_run() -> None:
    assert reproduces("OA-COMPACTION-FAILURE-FAILS-RUN"), "the run answers now: fixed?"


@pytest.mark.properties("S7")
def test_oa_clear_add_empties_session() -> None:
    assert reproduces("OA-CLEAR-ADD-EMPTIES-SESSION"), "the history is kept now: fixed?"


def test_programs_are_plain_openai_agents() -> None:
    """A program is what an upstream report quotes: it imports nothing of ctxaudit."""
    folder = program("X").parent
    for path in [*(program(f.id) for f in findings.FINDINGS), folder / "fake_responses.py"]:
        text = Path(path).read_text()
        assert "ctxaudit" not in text and "model." not in text, path.name
