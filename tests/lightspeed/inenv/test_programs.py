"""Fixed programs on every path: S1-S3, S6, S7, S9 and C1 without a search.

Each program is one short, explicit run of :class:`LightspeedMachine`: a kind of
request whose settlement differs from a plain turn's (compacted, at the limit,
blocked, ``store=false``, continued, its write failing, interrupted, hung up, hung up
and interrupted while the tree stores the turn), on
the path where it is sent; a request at the threshold, one over it and a fold under
each other compaction configuration the lockstep draws (``service.CONFIGS``); or a
known finding's program (``programs.PROGRAMS``).
The machine compares the tree with the model after every request, as in the
lockstep, so a program fails on the property the tree breaks.

They never ask Hypothesis for a random source: their verdict is the same under
every seed. The mutation runner runs the tests that reach a mutated function
fastest first, so a mutant of a path's write meets that path's program before
the lockstep's search, and a kill by a program is robust by nature
(mutation/README.md, "Robust kills"). The lockstep stays the search: it finds
what no program spells out.

The known findings that reproduce on the tree have their regions left out, as
the lockstep leaves them out; on the fully fixed tree nothing is left out.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ctxaudit.targets.lightspeed.findings import Finding
from ctxaudit.targets.lightspeed.harness import RunConfig
from tests.lightspeed.inenv import programs, service
from tests.lightspeed.inenv.test_lockstep import OPENINGS, LightspeedMachine, Send

pytestmark = pytest.mark.properties("S1", "S2", "S3", "S6", "S7", "S9", "C1")


def _opening(path: str, sends: tuple[Send, ...]) -> programs.Program:
    """A short /v1/query turn, then ``sends`` on ``path``, in one conversation."""

    def program(state: LightspeedMachine) -> None:
        conv = state.first_conversation()
        for send in sends:
            state.request(conv=conv, path=path, send=send)

    return program


def _configured(config: RunConfig, path: str, sends: tuple[Send, ...]) -> programs.Program:
    """:func:`_opening`, with the tree and the model under ``config``."""

    def program(state: LightspeedMachine) -> None:
        state.configure(config)
        _opening(path, sends)(state)

    return program


def _started_by(path: str, send: Send) -> programs.Program:
    """A conversation whose first request is ``send`` on ``path``, then a short /v1/query
    turn: the tree must have recorded the conversation (its owner) whatever ended the
    request that created it."""

    def program(state: LightspeedMachine) -> None:
        conv = state.new_conversation(first=path, send=send)
        state.request(conv=conv, path="query", send=Send())

    return program


def _after_a2a_start(state: LightspeedMachine) -> None:
    """A conversation an A2A message starts, continued over A2A with a compacted message."""
    conv = state.new_conversation(first="a2a")
    state.request(conv=conv, path="a2a", send=Send())
    state.request(conv=conv, path="a2a_stream", send=Send(size="over_limit"))


PATH_PROGRAMS: dict[str, Callable[[LightspeedMachine], None]] = {
    **{f"{kind} on {path}": _opening(path, sends) for kind, path, sends in OPENINGS},
    "compacted on a2a_stream": _opening("a2a_stream", (Send(), Send(size="over_limit"))),
    "blocked on responses_stream": _opening("responses_stream", (Send(ending="blocked"),)),
    "store=false on responses_stream": _opening("responses_stream", (Send(store=False),)),
    "continued on responses_stream": _opening("responses_stream", (Send(), Send(previous=True))),
    "interrupted after a compaction on streaming_query": _opening(
        "streaming_query", (Send(), Send(size="over_limit", ending="interrupt"))
    ),
    "hung up, interrupted while stored, on streaming_query": _opening(
        "streaming_query", (Send(ending="hang_up_interrupt"),)
    ),
    "hung up, interrupted while stored, after a compaction on streaming_query": _opening(
        "streaming_query", (Send(), Send(size="over_limit", ending="hang_up_interrupt"))
    ),
    "started over a2a, then compacted": _after_a2a_start,
    "started by an interrupted stream, then continued": _started_by(
        "streaming_query", Send(ending="interrupt")
    ),
    "started by a stream hung up, then continued": _started_by(
        "responses_stream", Send(ending="hang_up")
    ),
    "started by a streaming_query hung up, then continued": _started_by(
        "streaming_query", Send(ending="hang_up")
    ),
    "started blocked, then continued": _started_by("responses", Send(ending="blocked")),
    "blocked, store=false, on responses": _opening(
        "responses", (Send(ending="blocked", store=False),)
    ),
    "continued, store=false, on responses": _opening(
        "responses", (Send(), Send(previous=True, store=False))
    ),
    "continued, store=false, on responses_stream": _opening(
        "responses_stream", (Send(), Send(previous=True, store=False))
    ),
    "store=false, hung up, on responses_stream": _opening(
        "responses_stream", (Send(store=False, ending="hang_up"),)
    ),
    "hung up after a compaction on responses_stream": _opening(
        "responses_stream", (Send(), Send(size="over_limit", ending="hang_up"))
    ),
}
#: each configuration the lockstep draws besides the default: a request at its
#: threshold and one over it, after a short turn, a fold with more turns than it
#: keeps verbatim, and a fold whose newest turn is padded (over a cap on the kept
#: turns' size, where the configuration has one) followed by a compacted request
CONFIGURED: dict[str, Callable[[LightspeedMachine], None]] = {
    f"{kind} on {path} under {config}": _configured(config, path, sends)
    for config in service.CONFIGS
    if config != service.CONFIG
    for kind, path, sends in (
        ("at the limit", "responses", (Send(), Send(size="at_limit"))),
        ("compacted", "responses", (Send(), Send(size="over_limit"))),
        ("compacted twice", "query", (Send(), Send(), Send(size="over_limit"), Send())),
        (
            "compacted after a padded turn",
            "responses",
            (Send(), Send(size="at_limit"), Send(size="over_limit"), Send()),
        ),
    )
}
ALL = {**PATH_PROGRAMS, **CONFIGURED, **programs.PROGRAMS}


@pytest.mark.parametrize("name", ALL)
def test_program(name: str, reproducing: tuple[Finding, ...]) -> None:
    """The program runs to its end with the tree and the model agreeing at every step."""
    state = LightspeedMachine()
    state.excluded = reproducing
    try:
        ALL[name](state)
    finally:
        state.teardown()
