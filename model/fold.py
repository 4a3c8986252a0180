"""C1 on a list of messages: when a summarizing harness folds, and what it keeps. Pure.

A harness that summarizes (langchain's ``SummarizationMiddleware`` is one) looks at
the conversation before each model call. When its trigger holds it replaces the
oldest messages with one summary and keeps a tail of the newest as they are. The
SPEC's C1 (docs/properties.md) is this with one trigger clause; a harness documents
its own clauses, comparison and tail, and each is a parameter here:

- :class:`Trigger`: clauses of thresholds on the token count, the message count and
  a fraction of the model's window; a clause holds when all of its thresholds do,
  the trigger when any clause does; ``inclusive`` says whether reaching a threshold
  is enough (``>=``) or it must be passed (``>``). Never on an empty conversation.
- :class:`Keep`: the tail, the newest ``amount`` messages or the longest suffix of at
  most ``amount`` tokens, never empty; the cut then moves *back* until every tool
  result in the tail has the model message that asked for it in the tail too, so a
  model message that asked for tools stays with their results however they came back
  (late, out of order, interleaved with other messages' results). A tool result whose
  call is not in the conversation belongs to no kept unit: a cut on it moves *forward*
  past it, so no tail starts with a result nobody asked for.
- :func:`fold`: ``[summary] + tail``. Whatever came before the tail, an earlier summary
  included, is what is summarized; nothing is lost and nothing doubled.

How tokens are counted and what a summary says belong to the harness: both are
inputs (``count``, ``summary``). A harness that also reads the token count its
provider reported (``Trigger.reports``) reads it only while that report is about the
conversation as it stands: a message kept through a fold keeps its text, not its
report (:func:`fold` drops it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal


@dataclass(frozen=True)
class Message:
    """One message of the conversation, as the fold sees it."""

    kind: Literal["human", "ai", "tool", "summary"]
    id: str
    text: str
    calls: tuple[str, ...] = ()  # ai: the ids of the tool calls it asks for
    answers: str | None = None  # tool: the id of the call it answers
    #: ai: the token count the provider reported for the call that wrote it, while
    #: that report is about the conversation as it stands (None: no report, or stale)
    reported: int | None = None


Count = Callable[[Sequence[Message]], int]


@dataclass(frozen=True)
class Trigger:
    #: each clause maps "tokens", "messages" or "fraction" to a threshold
    clauses: tuple[Mapping[str, float], ...]
    inclusive: bool = False  # reaching a threshold is enough (>=), else it is passed (>)
    reports: bool = False  # a provider-reported count can meet a token threshold too

    def fires(self, messages: Sequence[Message], count: Count, window: int | None) -> bool:
        if not messages:
            return False
        tokens = count(messages)
        reported = last_report(messages) if self.reports else None

        def meets(value: float, threshold: float) -> bool:
            return value >= threshold if self.inclusive else value > threshold

        def holds(kind: str, threshold: float) -> bool:
            if kind == "messages":
                return meets(len(messages), threshold)
            if kind == "fraction":
                if window is None:
                    return False
                threshold = math.floor(window * threshold)
            return meets(tokens, threshold) or (reported is not None and meets(reported, threshold))

        return any(all(holds(k, v) for k, v in clause.items()) for clause in self.clauses)


def last_report(messages: Sequence[Message]) -> int | None:
    """The report of the newest model message, if it has one that is current."""
    ai = [m for m in messages if m.kind == "ai"]
    return ai[-1].reported if ai else None


@dataclass(frozen=True)
class Keep:
    unit: Literal["messages", "tokens"]
    amount: int  # > 0

    def tail(self, messages: Sequence[Message], count: Count) -> int:
        """Where the tail ``amount`` measures starts: the newest ``amount`` messages, or
        the longest suffix of at most ``amount`` tokens; never past the newest message."""
        n = len(messages)
        if self.unit == "messages":
            start = max(n - self.amount, 0)
        else:
            start = next((i for i in range(n) if count(messages[i:]) <= self.amount), n)
        return min(start, n - 1) if n else 0

    def cut(self, messages: Sequence[Message], count: Count) -> int:
        """Where the kept tail starts, whole units kept: 0 keeps everything (no fold)."""
        start = self.tail(messages, count)
        return unit_start(messages, start) if start else 0


def unit_start(messages: Sequence[Message], index: int) -> int:
    """Where a tail measured from ``index`` starts once it keeps whole units: moved back
    to the earliest model message that asked for a call some result in the tail
    answers, and again from there, until no result in the tail answers a call made
    before it. Tool results at that start whose call is not before them (orphans)
    start no unit: the start is past them."""
    asker = askers(messages)
    start = index
    while before := [asker[i] for i in range(start, len(messages)) if asker.get(i, start) < start]:
        start = min(before)
    while start < len(messages) and messages[start].kind == "tool":
        start += 1
    return start


def askers(messages: Sequence[Message]) -> dict[int, int]:
    """The position of the model message whose call each tool result answers, by the
    result's position: the newest call with its id made before the result and not
    answered yet (ids are the provider's strings: nothing makes them unique across a
    history). A result whose call is gone has none."""
    waiting: dict[str, list[int]] = {}
    out: dict[int, int] = {}
    for i, m in enumerate(messages):
        if m.answers is not None and waiting.get(m.answers):
            out[i] = waiting[m.answers].pop()
        for call in m.calls:
            waiting.setdefault(call, []).append(i)
    return out


def fold(messages: Sequence[Message], cut: int, summary: Message) -> tuple[Message, ...]:
    """The conversation after a fold at ``cut``: the summary of ``messages[:cut]``, then
    the tail, each kept message as it was but without a report (it was about a prompt
    that no longer exists)."""
    assert 0 < cut <= len(messages) and summary.kind == "summary"
    return (summary, *(replace(m, reported=None) for m in messages[cut:]))
