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
    asked = {c: e.id for e in before for c in e.calls}
    kept_calls = {c for e in kept for c in e.calls}
    orphans = [
        e.id
        for e in kept
        if e.answers is not None and e.answers in asked and e.answers not in kept_calls
    ]
    if orphans:
        broken.append(
            f"F3: kept tool result(s) {orphans} answer calls that were summarized "
            f"(by {sorted({asked[e.answers] for e in kept if e.id in orphans and e.answers})})"
        )
    answered = {e.answers: e.id for e in before if e.answers is not None}
    kept_answers = {e.answers for e in kept if e.answers is not None}
    unanswered = sorted(c for c in kept_calls if c in answered and c not in kept_answers)
    if unanswered:
        broken.append(
            f"F4: kept call(s) {unanswered} lost their result(s) "
            f"{[answered[c] for c in unanswered]} to the summary"
        )
    return broken
