"""The budget concern over whole agent runs (B1-B3): what a harness's adapter must do for
the run lockstep (:mod:`ctxaudit.locksteps.budget_runs`) to drive its agent loop under
usage limits.

Some harnesses meter inside their agent loop, with no meter a caller can step one call
at a time (:mod:`ctxaudit.concerns.budget` is the protocol of those that have one):
pydantic-ai's ``UsageLimits`` are checked by the run itself, before each request, after
each response and before each batch of tool calls. Such a harness is driven a run at a
time. The lockstep scripts the LLM: a run is a tuple of :class:`Step`, each one response
(the usage of its requests; its tool calls, or the final text answer), under
:class:`Limits`, metering into a pool of usage that the caller carries from one run to
the next (a delegate given its parent's usage, a conversation's running total). The
adapter runs the script from one of its entry points, with the LLM faked to answer it,
and says what it observed (:class:`Observed`), all of it through the harness's public
API.

The harness's documented contract is its :class:`Contract`: which comparison its token
limits use, what a limit of 0 means, whether a request is refused while a token limit is
passed. It is quoted from the harness's docs, and it is the model's parameters, never a
branch of the lockstep.

Nothing here imports the model or Hypothesis: an adapter imports this module wherever its
harness is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

#: the limits a run can stop on (``model.budget.Cap``'s values): what :attr:`Observed.raised`
#: names
REQUESTS, INPUT, OUTPUT, TOTAL = "iterations", "input", "output", "total"
REQUEST_INPUT, TOOL_CALLS = "request-input", "tool-calls"

#: what a harness may have besides a request limit and its request and token meters, each
#: a part of what the lockstep draws; one a harness lacks is never drawn
TOKEN_LIMITS = "token limits"  # input, output, total and one request's input
TOOL_LIMIT = "tool-call limit"  # and the tool-call meter it counts on
CARRIED_POOL = "carried pool"  # a run meters into usage carried from earlier runs
CONTINUED = "continued responses"  # a response the provider continued: several requests
CAPABILITIES = frozenset({TOKEN_LIMITS, TOOL_LIMIT, CARRIED_POOL, CONTINUED})


@dataclass(frozen=True)
class Segment:
    """One request of a response. A response continued by the provider (the
    ``pause_turn`` shape: a ``suspended`` response, then its continuation) is several
    requests whose usage the harness sums into one response."""

    input: int  # the request's input tokens, cached ones included
    cached: int  # of which read from the cache
    output: int


@dataclass(frozen=True)
class Step:
    """One scripted response: its requests, then its tool calls (0: the final answer)."""

    segments: tuple[Segment, ...]
    tools: int


@dataclass(frozen=True)
class Limits:
    """A run's usage limits; None turns one off."""

    requests: int | None = None  # responses the run may ask for
    input: int | None = None  # input tokens, cumulative
    output: int | None = None  # output tokens, cumulative
    total: int | None = None  # input and output together
    request_input: int | None = None  # one request's input tokens
    tool_calls: int | None = None  # tool calls run


@dataclass(frozen=True)
class Meters:
    """A pool of usage: what the run meters into (responses counted as requests). A
    harness without :data:`TOOL_LIMIT` keeps no tool-call meter: its ``tool_calls`` is 0."""

    requests: int
    input: int
    output: int
    tool_calls: int = 0


@dataclass(frozen=True)
class Observed:
    """One run, as the harness's public API shows it."""

    requests_received: int  # requests the faked LLM received, continuations included
    seen_by_tools: tuple[tuple[int, int, int], ...]  # (requests, input, output) per tool call
    raised: str | None  # the limit the run stopped on (one of the names above), or None
    message: str | None  # the harness's own words for it
    pool: Meters  # the pool after the run


@dataclass(frozen=True)
class Contract:
    """Where a harness's documented contract differs from the specification's defaults
    (docs/properties.md, section 1b), each with the doc text that says so."""

    at_cap: bool  # a token limit is reached at the limit (``>=``); False: only past it
    zero_is_cap: bool  # a limit of 0 allows nothing; False: 0 is no limit
    refuse_over_cap: bool  # a request is refused while a token limit is passed
    quoted: str  # the harness's docs, quoted, with where


class RunBudgetAdapter(Protocol):
    """How the run lockstep reaches a harness's agent loop."""

    #: how reports name it ("pydantic-ai UsageLimits")
    name: str
    #: the documented ways to run the agent to its end (``run_sync``, the async ``run``,
    #: ``iter`` stepped ...); every run is drawn at one of them
    entry_points: tuple[str, ...]
    contract: Contract
    #: which of :data:`CAPABILITIES` the harness has
    capabilities: frozenset[str]

    def run(self, steps: tuple[Step, ...], limits: Limits, pool: Meters, entry: str) -> Observed:
        """One agent run of ``steps`` (the last a final answer) under ``limits``, metering
        into a pool that holds ``pool`` (zero for a harness without
        :data:`CARRIED_POOL`), started at ``entry``; the faked LLM answers each request
        with the next segment."""
