"""pydantic-ai's own bug history (ctxaudit/targets/pydantic_ai/history/): each upstream
bug's seed-free program, run in the release environments the suite builds anyway, each
program in its own process forked after one import of pydantic-ai
(``tests/history_programs.py``). A program that exits neither 0 (holds) nor 1
(reproduces) is ctxaudit's own error: could not check, never a verdict.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxaudit.targets.pydantic_ai.history import BUGS
from tests.history_programs import RECORD as RECORD_NAME
from tests.history_programs import judge_on_release, releases

RELEASES = releases(BUGS)
#: the programs' recorded exits, judged where their inputs are unchanged
RECORD = Path(__file__).with_name(RECORD_NAME)
PRELOAD = "pydantic_ai,pydantic_ai.models.function,pydantic_ai.usage,pydantic_ai.exceptions"


@pytest.mark.parametrize("version", RELEASES)
def test_programs_on_release(version: str) -> None:
    """Every bug's program on one release: it reproduces where the record says it
    fails, and not where it says it holds."""
    judge_on_release("pydantic-ai", version, BUGS, PRELOAD, RECORD)


def test_the_record_is_consistent() -> None:
    """Each bug names a program that exists and is plain pydantic-ai; a fixed one holds
    after its fix and either reproduces before it or says why that is not run."""
    for bug in BUGS:
        assert bug.program.is_file(), bug.program
        assert bug.holds_on, bug.upstream
        assert bug.before in bug.fails_on or bug.before_unchecked, bug.upstream
        text = bug.program.read_text()
        assert "ctxaudit" not in text and "model." not in text, bug.upstream
