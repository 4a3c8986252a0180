"""The adapter keeps the three outcomes apart: a scripted fault the agent lets escape is
observed (the lockstep judges the turn), an error of ctxaudit's own fake is *could not
check*, never an observed failed reduction that would bend what the lockstep expects.

It checks ctxaudit, not the release: no property is claimed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ctxaudit.concerns.restore import SUMMARIZING, WINDOW, Settings, Turn
from ctxaudit.outcomes import CouldNotCheck, could_not_check
from ctxaudit.targets.strands_agents import conversation
from ctxaudit.targets.strands_agents.conversation import Restore
from tests.strands_agents.inenv.conftest import VERSION


class ShortScript(conversation.ScriptedModel):
    """A fake whose script lacks the turn's last reply: the agent calls once more."""

    @property
    def replies(self) -> list[Any]:
        return self._replies

    @replies.setter
    def replies(self, replies: list[Any]) -> None:
        self._replies = replies[:-1]


def settings(manager: str) -> Settings:
    return Settings(manager=manager, keep=2, share=0.5, pin=None, store="file", proactive=False)


def test_a_script_that_runs_out_is_could_not_check(tmp_path: Path) -> None:
    talk = Restore(VERSION).conversation(settings(WINDOW), tmp_path)
    talk.model = ShortScript()
    talk.agent = talk.new_agent()
    with pytest.raises(CouldNotCheck, match="no reply scripted") as raised:
        talk.turn(Turn("u1", (("t1",), ()), None, "a1", None, False))
    assert could_not_check(raised.value) is not None


def test_an_overflow_it_cannot_reduce_is_observed(tmp_path: Path) -> None:
    """A first prompt that overflows leaves nothing a window can trim: the agent raises
    the scripted overflow, observed as the turn's failure."""
    talk = Restore(VERSION).conversation(settings(WINDOW), tmp_path)
    observed = talk.turn(Turn("u1", ((),), 0, "a1", None, False))
    assert observed.raised and "ContextWindowOverflowException" in observed.raised


def test_a_failed_summary_is_observed(tmp_path: Path) -> None:
    talk = Restore(VERSION).conversation(settings(SUMMARIZING), tmp_path)
    for n in (1, 2, 3):
        assert talk.turn(Turn(f"u{n}", ((),), None, f"a{n}", None, False)).raised is None
    observed = talk.turn(Turn("u4", ((),), 0, "a4", None, True))
    assert observed.raised and conversation.SUMMARY_DOWN in observed.raised
