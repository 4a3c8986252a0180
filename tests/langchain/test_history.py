"""langchain's own bug history (ctxaudit/targets/langchain/history/): each upstream bug's
seed-free program, run in the release environments the suite builds anyway.

A fixed bug's program must reproduce it on the releases before its fix and not on those
after; an unfixed one's must reproduce it on the current release. A program that exits
neither 0 (holds) nor 1 (reproduces) is ctxaudit's own error: could not check, never a
verdict.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxaudit.targets.langchain.findings import BY_ID
from ctxaudit.targets.langchain.history import BUGS
from ctxaudit.targets.langchain.tree import PINNED
from tests.history_programs import RECORD as RECORD_NAME
from tests.history_programs import judge_on_release, releases

RELEASES = releases(BUGS)
#: the programs' recorded exits, judged where their inputs are unchanged
RECORD = Path(__file__).with_name(RECORD_NAME)


#: what every program imports, loaded once before the programs fork
PRELOAD = (
    "langchain.agents,langchain.agents.middleware,langchain.agents.structured_output,"
    "langchain_core.language_models.fake_chat_models,langchain_core.messages,"
    "langchain_core.tools,pydantic"
)


@pytest.mark.parametrize("version", RELEASES)
def test_programs_on_release(version: str) -> None:
    """Every bug's program on one release: it reproduces where the record says it
    fails, and not where it says it holds."""
    judge_on_release("langchain", version, BUGS, PRELOAD, RECORD)


def test_the_record_is_consistent() -> None:
    """Each bug names a program that exists; a fixed one has a release on each side of
    its fix, an unfixed one reproduces on the current release; a registered finding's
    program is that finding's."""
    for bug in BUGS:
        assert bug.program.is_file(), bug.program
        if bug.fix.startswith("unfixed"):
            assert PINNED in bug.fails_on and not bug.holds_on, bug.upstream
        else:
            assert bug.fails_on and bug.holds_on and bug.before in bug.fails_on, bug.upstream
        if bug.finding:
            assert bug.finding in BY_ID and bug.program.parent.name == "repro", bug.upstream
        else:
            assert bug.program.parent.name == "history", bug.upstream


def test_programs_are_plain_langchain() -> None:
    """A program is what an upstream report quotes: it imports nothing of ctxaudit."""
    for bug in BUGS:
        text = bug.program.read_text()
        assert "ctxaudit" not in text.replace("ctxaudit:", "") and "model." not in text, bug
