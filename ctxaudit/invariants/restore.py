"""The restore concern's invariants: what an agent whose conversation is managed and
persisted may hold. A user states each without knowing how the harness folds, trims or
restores (:mod:`ctxaudit.concerns.restore`):

- R1 *a restore gives back what was held*: the agent restored from a session holds the
  conversation the agent that wrote it held, message for message, and the same
  key-value state (S2, S6).
- R2 *pinned stays*: once pinned, each of the first ``pin`` messages is held, in its
  order, at the front (a summary or a trim never takes it) (S6).
- R3 *nothing lost, nothing doubled* (a summarizing manager): every message the agent
  added is held, or was sent to a summary that is held (directly, or through a summary
  that was itself summarized), and not both (S6). A window drops what it trims by design.
- R4 *no orphaned result*: a tool result follows the model message that asked for it, at
  once (C1: a provider rejects a result nobody asked for).
- R5 *the recent stay* (a summarizing manager): a summary is never sent any of the newest
  ``keep`` messages of the conversation the agent held when it asked for the summary: the
  manager always keeps those (C1: what a fold keeps).
- R6 *a death loses only what was in flight*: the agent restored after its process died
  holds the conversation and the key-value state the agent held at its store's last save
  before the death (a store that saves every message: the moment it died; one that saves
  when a call ends: the end of its last call), message for message (S2, S6).

A message is known by the id its first block carries (:func:`key`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from ctxaudit.concerns.restore import Block, Held


def key(message: Held) -> str:
    """A message's id: its text's, its first call's, or ``r-`` and its first result's."""
    if not message.blocks:
        return "?"
    first = message.blocks[0]
    return f"r-{first.id}" if first.kind == "result" else first.id


def spell(messages: Sequence[Held]) -> str:
    return " ".join(key(m) for m in messages)


def check_restored(held: Sequence[Held], restored: Sequence[Held]) -> list[str]:
    """R1: ``restored`` is ``held``."""
    if list(restored) == list(held):
        return []
    return [
        "R1: the restored agent holds another conversation than the agent that wrote the "
        f"session:\n  held:     {spell(held)}\n  restored: {spell(restored)}"
    ]


def check_restored_state(had: Mapping[str, object], got: Mapping[str, object]) -> list[str]:
    """R1 on the agent's key-value state: ``got`` (restored) is ``had``."""
    if dict(got) == dict(had):
        return []
    return [
        "R1: the restored agent holds another state than the agent that wrote the session:\n"
        f"  held:     {dict(had)}\n  restored: {dict(got)}"
    ]


def check_restored_after_death(
    saved: Sequence[Held],
    saved_state: Mapping[str, object],
    restored: Sequence[Held],
    restored_state: Mapping[str, object],
    when: str,
) -> list[str]:
    """R6: the agent restored after a death holds ``saved`` and ``saved_state``, what the
    agent held at its store's last save (``when``: that moment, for the report)."""
    broken = []
    if list(restored) != list(saved):
        broken.append(
            "R6: the agent restored after its process died holds another conversation than "
            f"the agent held {when}:\n  saved:    {spell(saved)}\n  restored: {spell(restored)}"
        )
    if dict(restored_state) != dict(saved_state):
        broken.append(
            "R6: the agent restored after its process died holds another state than the "
            f"agent held {when}:\n  saved:    {dict(saved_state)}\n  restored: "
            f"{dict(restored_state)}"
        )
    return broken


def check_held(
    held: Sequence[Held],
    added: Sequence[str],
    pinned: Sequence[str],
    summaries: Mapping[str, Sequence[str]],
    summarizing: bool,
) -> list[str]:
    """R2-R4 on what the agent holds after a turn.

    ``added``: every message's id the agent added, in order; ``pinned``: the ids pinned so
    far (none before the first fold or trim); ``summaries``: each summary's id with the ids
    of what it was sent.
    """
    broken = []
    keys = [key(m) for m in held]
    if keys[: len(pinned)] != list(pinned):
        broken.append(
            f"R2: the pinned {' '.join(pinned)} are not held at the front: {' '.join(keys)}"
        )
    if summarizing:
        # how many times each id was sent to the held summaries (directly, or through a
        # summary a held one was sent: each summary counted once), and to which first
        covered: Counter[str] = Counter()
        by: dict[str, str] = {}
        visited: set[str] = set()

        def cover(summary: str) -> None:
            if summary in visited:
                return
            visited.add(summary)
            for sent in summaries.get(summary, ()):
                covered[sent] += 1
                by.setdefault(sent, summary)
                cover(sent)

        for k in keys:
            if k in summaries:
                cover(k)
        # a message is covered once any of its blocks was sent (its first is its key); a
        # message the agent added twice (a retried prompt) is held or covered twice
        times, held_times = Counter(added), Counter(keys)
        for k in dict.fromkeys(added):
            n, h, c = times[k], held_times[k], covered[k]
            if h + c == 0:
                broken.append(f"R3: {k} is neither held nor in a held summary")
            elif h + c < n:
                broken.append(
                    f"R3: {k} was added {n} times; it is held {h} and in held summaries {c} times"
                )
        for k in dict.fromkeys(keys):
            n, h, c = times[k] or 1, held_times[k], covered[k]  # (a summary: made once)
            if h > n:
                broken.append(f"R3: {k} is held {h} times")
            elif h + c > n:
                broken.append(f"R3: {k} is held and also in the held summary {by[k]}")
    for i, m in enumerate(held):
        results = {b.id for b in m.blocks if b.kind == "result"}
        if not results:
            continue
        asked = {b.id for b in held[i - 1].blocks if b.kind == "call"} if i else set()
        if not results <= asked:
            broken.append(
                f"R4: the result(s) {' '.join(sorted(results - asked))} at {i} follow no call of "
                "theirs"
            )
    return broken


def check_recent(sent: Sequence[str], held_then: Sequence[Held], keep: int) -> tuple[Held, ...]:
    """R5: which of the newest ``keep`` messages of ``held_then`` (the conversation when a
    summary was asked for) the summary was sent (``sent``: the ids it was sent, a result's
    as ``r-`` and its call's id)."""
    recent = held_then[-keep:] if keep > 0 else ()
    # an id the conversation held more than once (a retried prompt): the summary took a
    # recent copy only when it was sent more copies than the older messages hold
    older = Counter(
        _sent_as(b) for m in held_then[: len(held_then) - len(recent)] for b in m.blocks
    )
    times = Counter(sent)
    return tuple(
        m for m in recent if any(times[_sent_as(b)] > older[_sent_as(b)] for b in m.blocks)
    )


def _sent_as(block: Block) -> str:
    return f"r-{block.id}" if block.kind == "result" else block.id


def recent_broken(summary: str, took: Sequence[Held], held_then: Sequence[Held], keep: int) -> str:
    """R5's failure: what the summary took of the recent messages."""
    return (
        f"R5: the summary {summary} was sent {spell(took)}, of the {keep} newest messages "
        f"({spell(held_then[-keep:])}) the manager always keeps; the conversation was "
        f"{spell(held_then)}"
    )
