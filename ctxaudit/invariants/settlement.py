"""The settlement's invariants: what a store of conversation turns may hold.

Requests are sent to a conversation one after another; each answered one whose turn is
stored becomes one turn of it. Whatever decides which turns are stored (compaction, a
store flag, a failed write), a user expects of what the store holds:

- T1 *once*: a request's turn is stored at most once.
- T2 *in order*: the turns stand in the order their requests ended. A turn is appended
  when its request ends, as the inference server does (docs/properties.md, "Order of
  turns": OGX appends a turn when its response completes), so a request sent while
  another of the conversation is in flight, and ended first, stands before it.
- T3 *its original input*: a stored turn holds its request's input exactly as the user
  sent it, never a rewrite (a compacted request is sent a summary instead: that is what
  the model saw, not what the user said).
- T4 *nothing lost*: a request that was answered, asked to be stored and whose write
  did not fail has its turn stored.
- T5 *folded once*: no turn is folded into more than one summary marker (markers that
  name the turns they fold, ``first_turn`` .. ``last_turn``, never overlap): a turn
  folded twice is summarized twice in every later request's input. Two compacted
  requests in flight at once both plan to fold the same turns; the one that ends
  second must not store its marker over what the first one's already folds.

A request is known by a label the lockstep reads off its input (:data:`Label`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

JSONObject = Mapping[str, Any]
#: the label of the request whose input ``items`` are (None: no request's)
Label = Callable[[Sequence[JSONObject]], "str | None"]


def check_conversation(
    stored: Sequence[tuple[int, str, JSONObject]],
    sent: Mapping[str, Sequence[JSONObject]],
    label: Label,
    must: Collection[str] = (),
    *,
    ended: Sequence[str],
) -> list[str]:
    """The invariants one conversation's store breaks.

    ``stored``: its items as ``(turn number, kind, content)``, kind ``input`` for what the
    user sent; ``sent``: each request's label and input; ``must``: the labels whose turn
    must be stored (T4); ``ended``: the labels in the order their requests ended, as the
    caller saw them end (T2)."""
    inputs: dict[int, list[JSONObject]] = {}
    for turn, kind, content in stored:
        if kind == "input":
            inputs.setdefault(turn, []).append(content)
    labels = [(turn, label(items)) for turn, items in sorted(inputs.items())]
    broken: list[str] = []
    seen = [name for _, name in labels if name is not None]
    twice = sorted({name for name in seen if seen.count(name) > 1})
    if twice:
        broken.append(f"T1: stored more than once: {twice}")
    order = {name: k for k, name in enumerate(ended)}
    ranks = [order[name] for name in seen if name in order]
    if ranks != sorted(ranks):
        want = [name for name in ended if name in seen]
        broken.append(f"T2: turns out of the order they ended: {seen}, ended {want}")
    rewritten = [
        name
        for turn, name in labels
        if name is not None and name in sent and list(inputs[turn]) != list(sent[name])
    ]
    if rewritten:
        broken.append(f"T3: stored with an input other than the one sent: {rewritten}")
    lost = [name for name in sent if name in must and name not in seen]
    if lost:
        broken.append(f"T4: answered and to be stored, yet not stored: {lost}")
    folded: dict[int, int] = {}
    for _, kind, content in stored:
        first, last = content.get("first_turn"), content.get("last_turn")
        if kind == "summary" and isinstance(first, int) and isinstance(last, int):
            for turn in range(first, last + 1):
                folded[turn] = folded.get(turn, 0) + 1
    twice_folded = sorted(turn for turn, count in folded.items() if count > 1)
    if twice_folded:
        broken.append(f"T5: turns folded into more than one summary: {twice_folded}")
    return broken
