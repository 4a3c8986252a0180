"""Fixed programs: one per known finding, each the shortest run that shows it.

A program drives :class:`LightspeedMachine` (with nothing left out) through
explicit steps, the way a shrunk counterexample reads. It reproduces when the
machine raises an AssertionError naming the finding's property.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping

from ctxaudit.targets.lightspeed.findings import BY_ID, Finding, names_property
from tests.lightspeed.inenv import service
from tests.lightspeed.inenv.test_lockstep import LightspeedMachine, Send

Program = Callable[[LightspeedMachine], None]


def query_compacted(state: LightspeedMachine) -> None:
    """Two short turns, then a /v1/query one token over the limit: turn 1 is folded."""
    conv = state.first_conversation()
    state.request(conv=conv, path="query", send=Send())
    state.request(conv=conv, path="query", send=Send(size="over_limit"))


def streaming_query_compacted(state: LightspeedMachine) -> None:
    """As :func:`query_compacted`, on /v1/streaming_query."""
    conv = state.first_conversation()
    state.request(conv=conv, path="query", send=Send())
    state.request(conv=conv, path="streaming_query", send=Send(size="over_limit"))


def buffer_turns_lost(state: LightspeedMachine) -> None:
    """A fold keeps turn 2 verbatim; the next request is compacted (a marker exists)."""
    conv = state.first_conversation()
    state.request(conv=conv, path="responses", send=Send())
    state.request(conv=conv, path="responses", send=Send(size="over_limit"))
    state.request(conv=conv, path="responses", send=Send())


def buffer_settings_changed(state: LightspeedMachine) -> None:
    """A fold keeps turn 2 verbatim, one turn kept; then the operator keeps two, and the
    next request (compacted: a marker exists) must still send turn 1 only as summarized."""
    conv = state.first_conversation()
    state.request(conv=conv, path="responses", send=Send())
    state.request(conv=conv, path="responses", send=Send(size="over_limit"))
    state.reconfigure(config=dataclasses.replace(service.CONFIG, buffer=2))
    state.request(conv=conv, path="responses", send=Send())


def buffer_splits_turns(state: LightspeedMachine) -> None:
    """Turn 2 has a two-item input; the fold of turn 1 should keep all of turn 2."""
    conv = state.first_conversation()
    state.request(conv=conv, path="responses", send=Send(form="items"))
    state.request(conv=conv, path="responses", send=Send(size="over_limit"))


def unstored_not_compacted(state: LightspeedMachine) -> None:
    """A store=false request one token over the limit, after two short turns."""
    conv = state.first_conversation()
    state.request(conv=conv, path="responses", send=Send())
    state.request(conv=conv, path="responses", send=Send(size="over_limit", store=False))


def unstored_stored(state: LightspeedMachine) -> None:
    """A short store=false request on /v1/responses: nobody may store it."""
    conv = state.first_conversation()
    state.request(conv=conv, path="responses", send=Send(store=False))


def hang_up(state: LightspeedMachine) -> None:
    """A short /v1/streaming_query whose client hangs up after the first chunk, then the
    same on a streamed /v1/responses (a new conversation)."""
    conv = state.first_conversation()
    state.request(conv=conv, path="streaming_query", send=Send(ending="hang_up"))
    state.request(
        conv=state.new_conversation(), path="responses_stream", send=Send(ending="hang_up")
    )


def owner_turn_then_asked(state: LightspeedMachine) -> None:
    """A turn continued from previous_response_id (the owner writes it), then a short one."""
    conv = state.first_conversation()
    state.request(conv=conv, path="responses", send=Send())
    state.request(conv=conv, path="responses", send=Send(previous=True))
    state.request(conv=conv, path="responses", send=Send())


def continued_over_limit(state: LightspeedMachine) -> None:
    """Two short turns, then a continuation from the last response one token over the limit."""
    conv = state.first_conversation()
    state.request(conv=conv, path="responses", send=Send())
    state.request(conv=conv, path="responses", send=Send(size="over_limit", previous=True))


def stream_write_fails(state: LightspeedMachine) -> None:
    """A short turn, then a streamed /v1/responses one token over the limit whose write
    fails; then, in a new conversation, a streamed /v1/responses the tree blocks, whose
    write fails too. The region's two halves: the fold writes its summary marker before
    the stream starts, a blocked request its refusal turn; the store refuses each.
    """
    conv = state.first_conversation()
    state.request(conv=conv, path="responses", send=Send())
    state.request(
        conv=conv, path="responses_stream", send=Send(size="over_limit", write_fails=True)
    )
    state.request(
        conv=state.new_conversation(),
        path="responses_stream",
        send=Send(ending="blocked", write_fails=True),
    )


def interrupted(state: LightspeedMachine) -> None:
    """Four short /v1/streaming_query requests, each interrupted after its first chunk.

    Whether the tree keeps an interrupted turn depends on a race (the finding);
    four tries make a tree that loses it most of the time fail all but never.
    """
    for _ in range(4):
        conv = state.new_conversation()
        state.request(conv=conv, path="streaming_query", send=Send(ending="interrupt"))


def a2a_compacted(state: LightspeedMachine) -> None:
    """Two short turns, then an A2A message one token over the limit: turn 1 is folded."""
    conv = state.first_conversation()
    state.request(conv=conv, path="query", send=Send())
    state.request(conv=conv, path="a2a", send=Send(size="over_limit"))


def a2a_short(state: LightspeedMachine) -> None:
    """A short turn, then a short A2A message in its conversation, then a streamed one:
    neither compacted, each answered with the LLM's answer and stored where it holds."""
    conv = state.first_conversation()
    state.request(conv=conv, path="a2a", send=Send())
    state.request(conv=conv, path="a2a_stream", send=Send())


def past_first_page(state: LightspeedMachine) -> None:
    """Short /v1/responses turns with one-chunk answers until the model compacts: the
    conversation then holds more than 20 items, and its first compaction is due only
    by the count of every item."""
    conv = state.first_conversation()
    for _ in range(20):
        state.request(conv=conv, path="responses", send=Send(chunks=1))
        if any(turn.marker is not None for turn in state.convs[conv]):
            return  # compacted, and nothing after it


PROGRAMS: dict[str, Program] = {
    "LS-QUERY-COMPACTED-FAILS": query_compacted,
    "LS-STREAMING-QUERY-COMPACTED-FAILS": streaming_query_compacted,
    "LS-BUFFER-TURNS-LOST": buffer_turns_lost,
    "LS-BUFFER-SPLITS-TURNS": buffer_splits_turns,
    "LS-MARKER-COVERAGE-UNRECORDED": buffer_settings_changed,
    "LS-UNSTORED-NOT-COMPACTED": unstored_not_compacted,
    "LS-UNSTORED-STORED": unstored_stored,
    "LS-HANGUP-TURN-LOST": hang_up,
    "LS-OWNER-TURN-NOT-REPLAYED": owner_turn_then_asked,
    "LS-CONTINUATION-NOT-COMPACTED": continued_over_limit,
    "LS-FAILED-WRITE-FAILS-STREAM": stream_write_fails,
    "LS-INTERRUPT-TURN-LOST": interrupted,
    "LS-A2A-COMPACTED-TURN-LOST": a2a_compacted,
    "LS-ITEMS-FIRST-PAGE": past_first_page,
    "LS-A2A-NONE-PARAMS-SWALLOWED": a2a_short,
}


def run(finding_id: str) -> str | None:
    """The property's failure message, or None when the program passes."""
    state = LightspeedMachine()
    state.excluded = ()  # nothing left out, whatever the lockstep leaves out
    try:
        PROGRAMS[finding_id](state)
    except AssertionError as exc:
        return str(exc)
    finally:
        state.teardown()
    return None


class Reproduction(Mapping[str, str | None]):
    """Each known finding's program on this tree, run when its id is first looked up
    (then kept): a run that checks one finding's regression test (the fix audit's, for
    each fix) runs that finding's program only, not all of them. Iterating runs them
    all, in the registry's order."""

    def __init__(self) -> None:
        self._seen: dict[str, str | None] = {}

    def __getitem__(self, finding_id: str) -> str | None:
        if finding_id not in PROGRAMS:
            raise KeyError(finding_id)
        if finding_id not in self._seen:
            self._seen[finding_id] = run(finding_id)
        return self._seen[finding_id]

    def __iter__(self) -> Iterator[str]:
        return iter(PROGRAMS)

    def __len__(self) -> int:
        return len(PROGRAMS)

    def ran(self) -> tuple[str, ...]:
        """The programs run so far, in the order they ran."""
        return tuple(self._seen)


def reproducing(reproduction: Mapping[str, str | None]) -> tuple[Finding, ...]:
    """The known findings whose program fails on the property they name."""
    return tuple(
        BY_ID[fid]
        for fid, message in reproduction.items()
        if message is not None and names_property(message, BY_ID[fid].prop)
    )
