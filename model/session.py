"""S1-S3, S6, S7, S9 and C1 for a session store that the harness writes and compacts
itself after each turn (openai-agents' sessions are one). Pure.

Items are opaque strings; two kinds matter: a user message (``u:`` prefix) and a
compaction item (``CMP:`` prefix). The harness's documented contract is
:class:`Contract`'s parameters:

- ``window``: the store's retrieval default; a turn's model call is sent the newest
  ``window`` stored items (all when None) and the turn's own items so far.
- ``threshold``: the decision hook approves when the candidates (the snapshot's items
  other than user messages and compaction items) number at least ``threshold``.
- ``scope``: what an automatic compaction covers. ``"whole"``: the whole stored
  history; ``"suffix"``: the model-visible part of the history (what the turn's last
  model call was sent, and its answer): all of it when that is the whole history, else
  from its first user message, the items before it kept as they are. A manual
  compaction always covers the whole history (``force`` skips the threshold).

What holds for every setting: a turn is stored once, in order, its input first (S1-S3);
a compaction replaces exactly the items it covered, and the compaction call was sent
exactly those (S6; ``summarize`` is the harness's, an input here); a failed compaction
call changes nothing (S7), and does not change what the run answers (S9); an item
another writer appends while the call is in flight is kept, the replacement skipped
(S6: nothing lost); the hook approves exactly when the threshold is reached (C1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

Item = str
Summarize = Callable[[Sequence[Item]], list[Item]]


@dataclass(frozen=True)
class Contract:
    window: int | None = None
    threshold: int = 10
    scope: Literal["whole", "suffix"] = "whole"


@dataclass(frozen=True)
class Settled:
    stored: tuple[Item, ...]
    compacted: tuple[Item, ...] | None  # what the compaction call covered, if one was made
    answered: bool  # the run returns its answer (a manual compaction: it returns)


def is_user(item: Item) -> bool:
    return item.startswith("u:")


def candidates(items: Sequence[Item]) -> list[Item]:
    return [i for i in items if not is_user(i) and not i.startswith("CMP:")]


def visible(contract: Contract, stored: Sequence[Item]) -> list[Item]:
    """What a model call is sent of the stored history."""
    w = contract.window
    return list(stored if w is None else stored[max(0, len(stored) - w) :] if w > 0 else [])


def snapshot(contract: Contract, before: Sequence[Item], turn: Sequence[Item]) -> list[Item]:
    """What an automatic compaction after ``turn`` covers."""
    if contract.scope == "whole":
        return [*before, *turn]
    shown = visible(contract, before)
    seen = [*shown, *turn]
    if len(shown) == len(before):
        return seen  # complete coverage: the whole history
    first = next((k for k, i in enumerate(seen) if is_user(i)), len(seen))
    return seen[first:]


def fires(contract: Contract, covered: Sequence[Item], force: bool = False) -> bool:
    return force or len(candidates(covered)) >= contract.threshold


def replace(stored: Sequence[Item], covered: Sequence[Item], summarize: Summarize) -> list[Item]:
    """``stored`` with its suffix ``covered`` replaced by its summary."""
    assert list(stored[len(stored) - len(covered) :]) == list(covered), "not a suffix"
    return [*stored[: len(stored) - len(covered)], *summarize(covered)]


def run(
    contract: Contract,
    before: Sequence[Item],
    turn: Sequence[Item],
    summarize: Summarize,
    compact_fails: bool = False,
    late: Sequence[Item] = (),
) -> Settled:
    """A turn stored, then the automatic compaction. ``late``: another writer's items,
    appended while a compaction call is in flight (nothing is appended without one)."""
    stored = [*before, *turn]
    covered = snapshot(contract, before, turn)
    if not fires(contract, covered):
        return Settled(tuple(stored), None, True)
    if compact_fails or late:
        return Settled((*stored, *late), tuple(covered), True)
    return Settled(tuple(replace(stored, covered, summarize)), tuple(covered), True)


def manual(
    contract: Contract,
    stored: Sequence[Item],
    summarize: Summarize,
    force: bool,
    compact_fails: bool = False,
) -> Settled:
    """A manual compaction: the whole history, when forced or the hook approves; a
    failed call raises and changes nothing."""
    if not fires(contract, stored, force):
        return Settled(tuple(stored), None, True)
    if compact_fails:
        return Settled(tuple(stored), tuple(stored), False)
    return Settled(tuple(replace(stored, stored, summarize)), tuple(stored), True)
