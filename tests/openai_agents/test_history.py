"""openai-agents' own bug history (ctxaudit/targets/openai_agents/history/): each
upstream bug's seed-free program on the last release before its fix, where it must
reproduce, and on the audited releases after it, where it must not; each program in its
own process forked after one import of openai-agents (``tests/history_programs.py``). A
program that exits neither 0 (holds) nor 1 (reproduces) is ctxaudit's own error: could
not check, never a verdict.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxaudit.targets.openai_agents.history import BUGS
from ctxaudit.targets.openai_agents.tree import PINNED
from tests.history_programs import RECORD as RECORD_NAME
from tests.history_programs import judge_on_release, releases

RELEASES = releases(BUGS)
#: the programs' recorded exits, judged where their inputs are unchanged
RECORD = Path(__file__).with_name(RECORD_NAME)
#: what every program imports, loaded once before the programs fork
PRELOAD = "agents,agents.memory,agents.models.interface,openai.types.responses"


@pytest.mark.parametrize("version", RELEASES)
def test_programs_on_release(version: str) -> None:
    """Every bug's program on one release: it reproduces where the record says it
    fails, and not where it says it holds."""
    judge_on_release("openai-agents", version, BUGS, PRELOAD, RECORD)


def test_the_record_is_consistent() -> None:
    """Each bug names a program that exists and is plain openai-agents; a fixed one
    reproduces on the release before its fix and holds on the current release."""
    for bug in BUGS:
        assert bug.program.is_file(), bug.program
        assert bug.before in bug.fails_on and PINNED in bug.holds_on, bug.upstream
        assert not set(bug.fails_on) & set(bug.holds_on), bug.upstream
        text = bug.program.read_text()
        assert "ctxaudit" not in text.replace("ctxaudit:", "") and "fake_responses" not in text
