"""The message graphs real agent runs produce, drawn for the fold's suites.

A conversation is built by the operations an agent run performs, in any order: a user
speaks; the model answers with text or asks for tools (several calls in one message),
whose results come back at once, later, out of order, interleaved with other model
messages' results, or never (still pending); a result arrives whose call is not in
the conversation (the history was edited or restored from elsewhere). It may open with
any role, or with the summary of an earlier fold (summaries of summaries).

:class:`Builder` performs the operations; :func:`conversations` draws a whole
conversation for the model's own suite, and a stateful lockstep calls the builder's
operations as rules, so both draw the same shapes.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from hypothesis import strategies as st

from ctxaudit.invariants.fold import Entry
from model.fold import Message


def text(id: str, size: int) -> str:
    """A message's text: its id in brackets (found again in a summarizer's prompt),
    padded to ``size`` tokens; size 0 is no text at all (a model message that only
    calls tools)."""
    if size == 0:
        return ""
    head = f"[{id}]"
    return head + "w" * max(0, 4 * size - len(head))


class Builder:
    """A conversation under construction, and the calls still waiting for a result."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.pending: list[str] = []  # calls asked for and not yet answered, oldest first
        self._ids = itertools.count()

    def new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids)}"

    def human(self, size: int) -> Message:
        id = self.new_id("h")
        return self._add(Message("human", id, text(id, size)))

    def summary(self, size: int) -> Message:
        id = self.new_id("s")
        return self._add(Message("summary", id, text(id, size)))

    def ai(self, size: int, calls: int, reported: int | None = None) -> Message:
        id = self.new_id("a")
        ids = tuple(f"{id}c{i}" for i in range(calls))
        self.pending.extend(ids)
        return self._add(Message("ai", id, text(id, size), calls=ids, reported=reported))

    def answer(self, picks: Sequence[int], size: int) -> list[Message]:
        """Results for pending calls, each pick choosing one of those still waiting (by
        position, wrapped), so any subset in any order can come back."""
        out = []
        for pick in picks:
            if not self.pending:
                break
            call = self.pending.pop(pick % len(self.pending))
            id = self.new_id("t")
            out.append(self._add(Message("tool", id, text(id, size), answers=call)))
        return out

    def orphan(self, size: int) -> Message:
        id = self.new_id("t")
        return self._add(Message("tool", id, text(id, size), answers=f"gone-{id}"))

    def _add(self, message: Message) -> Message:
        self.messages.append(message)
        return message


SIZES = st.integers(0, 12)
PICKS = st.lists(st.integers(0, 5), min_size=1, max_size=4)
OPENINGS = ("human", "ai", "tool", "summary")


@st.composite
def conversations(draw: st.DrawFn, max_steps: int = 14) -> tuple[Message, ...]:
    """A conversation of up to ``max_steps`` operations after its opening message."""
    b = Builder()
    opening = draw(st.sampled_from(OPENINGS))
    if opening == "human":
        b.human(draw(SIZES))
    elif opening == "ai":
        b.ai(draw(SIZES), draw(st.integers(0, 3)))
    elif opening == "tool":
        b.orphan(draw(SIZES))
    else:
        b.summary(draw(SIZES))
    steps = st.sampled_from(("human", "ai", "ai-answered", "answer", "orphan"))
    for step in draw(st.lists(steps, max_size=max_steps)):
        if step == "human":
            b.human(draw(SIZES))
        elif step == "ai":  # its calls wait
            b.ai(draw(SIZES), draw(st.integers(1, 3)))
        elif step == "ai-answered":  # its calls answered at once, in order
            message = b.ai(draw(SIZES), draw(st.integers(0, 3)))
            for left in range(len(message.calls), 0, -1):
                b.answer([len(b.pending) - left], draw(SIZES))
        elif step == "answer":
            b.answer(draw(PICKS), draw(SIZES))
        else:
            b.orphan(draw(SIZES))
    return tuple(b.messages)


def entries(messages: Sequence[Message]) -> list[Entry]:
    """The model's messages as the invariants see them."""
    return [Entry(m.kind, m.id, m.calls, m.answers) for m in messages]


#: what a conversation holds that a fold must handle, as the shape coverage counts it
FEATURES = (
    "text only",
    "parallel calls",
    "result answered late",
    "results interleaved",
    "call pending",
    "result whose call is gone",
    "opens with an earlier summary",
    "opens with a model message or a result",
)


def features(messages: Sequence[Message]) -> list[str]:
    """The :data:`FEATURES` a conversation holds (a late result is one with something
    other than results between it and its call; interleaved results answer an earlier
    model message after a later one asked for tools)."""
    found = []
    asker = {c: i for i, m in enumerate(messages) for c in m.calls}
    answered = {m.answers for m in messages if m.kind == "tool"}
    late = interleaved = False
    for j, m in enumerate(messages):
        if m.kind != "tool" or m.answers not in asker:
            continue
        between = messages[asker[m.answers] + 1 : j]
        late = late or any(x.kind != "tool" and x.kind != "ai" for x in between)
        interleaved = interleaved or any(x.kind == "ai" for x in between)
    if not any(m.kind == "tool" or m.calls for m in messages):
        found.append("text only")
    if any(len(m.calls) > 1 for m in messages):
        found.append("parallel calls")
    if late:
        found.append("result answered late")
    if interleaved:
        found.append("results interleaved")
    if any(c not in answered for m in messages for c in m.calls):
        found.append("call pending")
    if any(m.kind == "tool" and m.answers not in asker for m in messages):
        found.append("result whose call is gone")
    if messages and messages[0].kind == "summary":
        found.append("opens with an earlier summary")
    if messages and messages[0].kind in ("ai", "tool"):
        found.append("opens with a model message or a result")
    return found
