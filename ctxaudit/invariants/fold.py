"""The fold's invariants: what a summarizing harness may do to a conversation.

A fold replaces the oldest messages with one summary and keeps the rest. Whatever the
trigger, the tail's size or the harness, a user expects of it:

- F1 *order kept*: what follows the summary is the end of the conversation as it was,
  every message unchanged and in its place; nothing else is added.
- F2 *nothing lost, nothing doubled*: the summarizer was sent exactly the messages
  that were removed, none of the kept ones.
- F3 *no orphaned result*: a kept tool result whose call was in the conversation has
  that call in the kept tail (a provider rejects a result nobody asked for).
- F4 *no unanswered kept call*: a kept call whose result was in the conversation has
  that result in the kept tail; only a call still pending has none.

A result answers the newest call with its id made before it and not answered yet: ids
are the provider's strings, and nothing makes them unique across a history (a result
whose call is gone may share its id with a later call). So a result kept with its call
can only come after it, and F4 holds wherever F1 does: it is checked all the same, as
a user states it.

A step that did not fold changes nothing (F1 with nothing removed and no summary).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Literal, NamedTuple


class Entry(NamedTuple):
    """One message, as the invariants see it."""

    kind: Literal["human", "ai", "tool", "summary", "system"]
    id: str
    calls: tuple[str, ...] = ()  # ai: the ids of the tool calls it asks for
    answers: str | None = None  # tool: the id of the call it answers


def check_fold(
    before: Sequence[Entry],
    after: Sequence[Entry],
    folded: bool,
    sent: Collection[str] = (),
    traceable: Collection[str] | None = None,
) -> list[str]:
    """The invariants ``after`` breaks as the result of one step on ``before``.

    ``folded``: the harness says it folded (a new summary leads ``after``); ``sent``:
    the ids of the messages the summarizer was sent; ``traceable``: the ids whose
    presence in what the summarizer was sent can be told (``None``: every id).
    """
    if not folded:
        if list(after) != list(before):
            return ["F1: a step that did not fold changed the conversation"]
        return []
    if not after:
        return ["F1: a fold left no summary"]
    kept = list(after[1:])
    removed = len(before) - len(kept)
    if removed < 0 or list(before[removed:]) != kept:
        return [
            "F1: what follows the summary is not the end of the conversation as it was, "
            f"in order: kept {[e.id for e in kept]}, conversation {[e.id for e in before]}"
        ]
    broken: list[str] = []
    gone = before[:removed]
    judged = set(traceable) if traceable is not None else None

    def told(entry: Entry) -> bool:
        return judged is None or entry.id in judged

    missing = [e.id for e in gone if told(e) and e.id not in sent]
    doubled = [e.id for e in kept if told(e) and e.id in sent]
    if missing or doubled:
        broken.append(
            "F2: the summarizer was not sent exactly what was removed: "
            f"removed but not sent {missing}, sent but kept {doubled}"
        )
    pairs = answered_calls(before)  # (result, asker) by position in ``before``
    orphans = [(r, a) for r, a in pairs if r >= removed > a]
    if orphans:
        broken.append(
            f"F3: kept tool result(s) {[before[r].id for r, _ in orphans]} answer calls "
            f"that were summarized (by {sorted({before[a].id for _, a in orphans})})"
        )
    unanswered = [(r, a) for r, a in pairs if a >= removed > r]
    if unanswered:
        broken.append(
            f"F4: kept call(s) of {[before[a].id for _, a in unanswered]} lost their "
            f"result(s) {[before[r].id for r, _ in unanswered]} to the summary"
        )
    return broken


def answered_calls(entries: Sequence[Entry]) -> list[tuple[int, int]]:
    """Each tool result with the message whose call it answers, as positions: the newest
    call with its id made before it and not answered yet (none: its call is gone)."""
    waiting: dict[str, list[int]] = {}
    pairs = []
    for i, e in enumerate(entries):
        if e.answers is not None and waiting.get(e.answers):
            pairs.append((i, waiting[e.answers].pop()))
        for c in e.calls:
            waiting.setdefault(c, []).append(i)
    return pairs
