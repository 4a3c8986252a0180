"""Token estimate, the compaction trigger (C1) and the compaction plan.

Token estimate (deterministic, no tokenizer): a text of ``n`` characters
(Python ``len``, i.e. code points) is ``ceil(n / 4)`` tokens; an item is the
estimate of its :func:`~ledger.items.canonical_json`. A request's estimate is
the sum over the instructions, every item the conversation holds (summary
markers included) and the new input items.

C1: a request is compacted exactly when its estimate is over both
``threshold_ratio * context_window`` and ``token_floor`` (strictly).

Compacting a conversation whose stored turns are ``1..n`` (a turn is what one
write appended; a summary marker belongs to the turn it was written with but
is not part of that turn's exchange):

- ``covered`` is the largest ``last_turn`` of the markers already stored (0 if
  none);
- turns ``covered+1 .. n-buffer_turns``, when there is at least one, are folded
  into a new marker (``first_turn``, ``last_turn``, and the summarizer's text
  over their input and output items, in order);
- the explicit input sent to inference is: every stored marker, then the new
  marker, then the input and output items of the turns no marker covers, then
  the new input items;
- the original input (the new input items as the user sent them) is handed to
  the settlement owner, which stores the new marker with the turn, unless a marker
  stored since (by a compacted request in flight with this one that ended first)
  already folds one of its turns (``ledger/owner.py``: no turn folded twice).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ledger.config import CompactionConfig
from ledger.items import SUMMARY, JSONObject, canonical_json, summary_marker
from ledger.store import StoredItem

CHARS_PER_TOKEN = 4

#: Turns the input and output items of folded turns into a summary text.
Summarizer = Callable[[Sequence[Mapping[str, Any]]], str]


def estimate_text(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def estimate_item(content: Mapping[str, Any]) -> int:
    return estimate_text(canonical_json(content))


def estimate_request(
    instructions: str,
    conversation: Sequence[Mapping[str, Any]],
    new_input: Sequence[Mapping[str, Any]],
) -> int:
    return (
        estimate_text(instructions)
        + sum(estimate_item(item) for item in conversation)
        + sum(estimate_item(item) for item in new_input)
    )


def should_compact(estimate: int, config: CompactionConfig) -> bool:
    """C1: over ``threshold_ratio * context_window`` and over ``token_floor``."""
    return (
        estimate > config.threshold_ratio * config.context_window and estimate > config.token_floor
    )


def extractive_summary(items: Sequence[Mapping[str, Any]], *, width: int = 80) -> str:
    """Default summarizer: one line per item, ``role: text`` cut to ``width`` characters."""
    lines = []
    for item in items:
        role = str(item.get("role", item.get("type", "item")))
        text = item.get("content", item.get("refusal", ""))
        if not isinstance(text, str):
            text = canonical_json(text)
        text = " ".join(text.split())
        lines.append(f"{role}: {text[:width]}")
    return "\n".join(lines)


@dataclass(frozen=True)
class CompactionPlan:
    estimate: int
    compacted: bool
    original_input: tuple[JSONObject, ...]
    #: what inference is sent instead of the conversation (compacted only)
    explicit_input: tuple[JSONObject, ...] | None = None
    #: the marker to store with the turn (compacted, and something to fold)
    summary: JSONObject | None = None


def plan_request(
    conversation: Sequence[StoredItem],
    new_input: Sequence[JSONObject],
    *,
    instructions: str,
    config: CompactionConfig,
    summarizer: Summarizer,
) -> CompactionPlan:
    original = tuple(dict(item) for item in new_input)
    estimate = estimate_request(instructions, [item.content for item in conversation], original)
    if not should_compact(estimate, config):
        return CompactionPlan(estimate, False, original)

    turns: dict[int, list[StoredItem]] = {}
    for item in conversation:
        turns.setdefault(item.turn, []).append(item)
    numbers = sorted(turns)
    markers = [item.content for item in conversation if item.kind == SUMMARY]
    covered = max((int(marker["last_turn"]) for marker in markers), default=0)

    summary: JSONObject | None = None
    last_to_fold = len(numbers) - config.buffer_turns
    if last_to_fold > covered:
        folded = [
            item.content
            for number in numbers[covered:last_to_fold]
            for item in turns[number]
            if item.kind != SUMMARY
        ]
        summary = summary_marker(covered + 1, last_to_fold, summarizer(folded))
        markers.append(summary)
        covered = last_to_fold
    recent = [
        item.content
        for number in numbers[covered:]
        for item in turns[number]
        if item.kind != SUMMARY
    ]
    explicit = tuple(markers + recent + list(original))
    return CompactionPlan(estimate, True, original, explicit, summary)
