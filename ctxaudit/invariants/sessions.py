"""The session store's invariants: what a user expects of a store whatever its design.

Checked on every read against the log of what was written to that session since it was
created (no model involved):

- SI1 *once, in order*: no event is read twice, and the events read stand in the order
  they were appended;
- SI2 *nothing that was not stored*: every event read was appended, final, to this very
  session (never a partial chunk, never another session's, never one of a deleted
  session of the same name);
- SI3 *as written*: an event reads back with its author and text, and its state delta
  less the ``temp:`` keys;
- SI4 *nothing lost*: a read with no filter returns every final event appended;
- SI5 *the newest n*: a read of the newest n returns the last n final events appended
  (all of them when there are fewer; none for n = 0, where the harness says so);
- SI6 *from a time on*: a read from a time on returns every final event appended at or
  after it, and none before.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxaudit.concerns.sessions import Event, Read

TEMP = "temp:"


def stored_delta(event: Event) -> tuple[tuple[str, Any], ...]:
    """The delta a store keeps of ``event``: every key but the ``temp:`` ones, sorted."""
    return tuple(sorted((k, v) for k, v in event.delta if not k.startswith(TEMP)))


def check_read(
    written: Sequence[Event],
    read: Read,
    recent: int | None = None,
    after: float | None = None,
    zero_recent_is_none: bool | None = True,
) -> list[str]:
    """The invariants a read of a session breaks, given what was ``written`` to it since it
    was created (partial chunks included), and what the read asked for: the newest
    ``recent`` events, those at or ``after`` a time, or (neither) all."""
    broken: list[str] = []
    ids = [e.id for e in read.events]
    if len(set(ids)) != len(ids):
        broken.append(f"SI1: an event is read twice: {ids}")
    final = {e.id: e for e in written if not e.partial}
    partial = {e.id for e in written if e.partial}
    foreign = [i for i in ids if i not in final]
    if foreign:
        why = ["a partial chunk" if i in partial else "never appended here" for i in foreign]
        broken.append(
            f"SI2: read events that were not stored: {list(zip(foreign, why, strict=True))}"
        )
    order = [e.id for e in written if e.id in set(ids) and not e.partial]
    if [i for i in ids if i in final] != order:
        broken.append(f"SI1: events read out of the order they were appended: {ids}")
    for got in read.events:
        sent = final.get(got.id)
        if sent is not None and (got.author, got.text, got.delta) != (
            sent.author,
            sent.text,
            stored_delta(sent),
        ):
            broken.append(
                f"SI3: {got.id} reads back as {(got.author, got.text, got.delta)}, "
                f"written {(sent.author, sent.text, stored_delta(sent))}"
            )
    if recent is None and after is None:
        lost = [i for i in final if i not in ids]
        if lost:
            broken.append(f"SI4: appended events missing from a whole read: {lost}")
    if recent is not None and after is None and (recent or zero_recent_is_none):
        newest = list(final)[max(len(final) - recent, 0) :] if recent else []
        if [i for i in ids if i in final] != newest:
            broken.append(f"SI5: the newest {recent} are {newest}, read {ids}")
    if after is not None and recent is None:
        since = [i for i, e in final.items() if e.time >= after]
        if [i for i in ids if i in final] != since:
            broken.append(f"SI6: the events at or after {after} are {since}, read {ids}")
    return broken
