"""The model's fold (``model/fold.py``) held to the fold's invariants (F1-F4,
``ctxaudit/invariants/fold.py``), with no target involved: the model is the oracle of
every lockstep, so where it breaks an invariant a target that agrees with it passes
for the wrong reason.

Conversations are drawn with the shapes real runs produce (``ctxaudit/locksteps/fold_shapes.py``):
parallel calls, results answered late, out of order or interleaved across model
messages, pending calls, results whose call is gone, any opening role, an earlier
summary. The fixed programs at the end are the shapes a keep setting cuts wrongly
when it moves the cut by the one message it lands on.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxaudit.invariants.fold import check_fold
from ctxaudit.locksteps.fold_shapes import Builder, conversations, entries
from model.fold import Keep, Message, fold
from model.settlement import tokens

pytestmark = pytest.mark.properties("C1", "S6")

SUMMARY = Message("summary", "s-new", "SUMMARY")


def count(messages: tuple[Message, ...] | list[Message]) -> int:
    return sum(tokens(m.text) for m in messages)


keeps = st.builds(Keep, st.sampled_from(["messages", "tokens"]), st.integers(1, 30))


def broken(messages: tuple[Message, ...], keep: Keep) -> list[str]:
    """What the model's fold of ``messages`` under ``keep`` breaks (nothing if it does
    not fold)."""
    cut = keep.cut(messages, count)
    if cut == 0:
        return []
    after = fold(messages, cut, SUMMARY)
    sent = {m.id for m in messages[:cut]}
    return check_fold(entries(messages), entries(after), True, sent)


@given(conversations(), keeps)
def test_the_models_fold_keeps_every_invariant(messages: tuple[Message, ...], keep: Keep) -> None:
    assert not broken(messages, keep), broken(messages, keep)


@given(conversations(), keeps)
def test_the_model_keeps_the_newest_message_unless_it_is_an_orphan(
    messages: tuple[Message, ...], keep: Keep
) -> None:
    """The tail is never empty, unless the newest message is a tool result whose call
    is not in the conversation (the cut moves past it)."""
    cut = keep.cut(messages, count)
    newest = messages[-1]
    orphan = newest.kind == "tool" and not any(newest.answers in m.calls for m in messages)
    assert cut < len(messages) or orphan


def test_interleaved_results_keep_both_model_messages() -> None:
    """Two model messages ask for a tool each, and both results come back after the
    second: keeping the newest two messages must keep both askers (a cut at the second
    asker alone would keep the first's result without its call)."""
    b = Builder()
    b.human(3)
    first = b.ai(0, 1)
    b.ai(0, 1)
    b.answer([0, 0], 3)
    messages = tuple(b.messages)
    cut = Keep("messages", 2).cut(messages, count)
    assert messages[cut] == first
    assert not broken(messages, Keep("messages", 2))


def test_a_result_answered_after_a_user_message_keeps_its_call() -> None:
    """A call answered late, after the user spoke again: a cut on the user's message
    moves back to the call, so its result is not kept alone."""
    b = Builder()
    b.human(3)
    asker = b.ai(0, 1)
    b.human(3)
    b.answer([0], 3)
    messages = tuple(b.messages)
    cut = Keep("messages", 2).cut(messages, count)
    assert messages[cut] == asker
    assert not broken(messages, Keep("messages", 2))


def test_a_pending_call_is_kept_without_a_result() -> None:
    """A call still waiting for its result is kept as it is (F4 asks only for results
    that exist)."""
    b = Builder()
    b.human(3)
    b.human(3)
    b.ai(0, 2)
    b.answer([0], 3)
    messages = tuple(b.messages)
    assert not broken(messages, Keep("messages", 2))
    assert Keep("messages", 2).cut(messages, count) == 2
