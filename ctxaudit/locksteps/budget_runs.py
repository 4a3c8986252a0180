"""The run lockstep of the budget concern (B1-B3): any harness's agent loop under usage
limits, through its adapter (:mod:`ctxaudit.concerns.budget_runs`), beside
``model.budget.Budget``.

One machine keeps a pool of usage that agent runs meter into, as a delegate given its
parent's usage or a conversation's running total does. Each run is a drawn script of
model responses (tool-call batches, then a text answer; a response may be continued, the
``pause_turn`` shape, which is two requests and one response) under drawn limits, each
either off or drawn around the pool's meters so runs land one below, on and one above
them. The model predicts, response by response, whether a request is refused first (B3:
the request limit, and a token limit already passed), what the response adds to the
meters (B1: input tokens, cached ones inside them, and output), which limit it passes
(B2: cumulative or per request) and whether its tool batch is refused whole (B3).

Each run is first held to the budget's invariants (BI1-BI5,
:mod:`ctxaudit.invariants.budget`), which do not trust the model: no meter goes back, the
run meters exactly the tokens of the requests it made and one tool call per tool that
ran, no request or tool runs past a limit, a run refused before its first request changes
nothing, a run over a token limit does not complete and the limit it names is reached.
Then it is compared with the model: the requests the LLM received, the meters each tool
call saw, the limit the run stopped on, and the pool. The adapter's
:class:`~ctxaudit.concerns.budget_runs.Contract` is the model's parameters.

A run that enters a registered finding's region (``left_out``: the target's findings say
so from the model before each response) is not compared; the pool takes the harness's
meters and the search goes on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

from hypothesis import event, note
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    rule,
    run_state_machine_as_test,
)

from ctxaudit import shapes
from ctxaudit.concerns.budget_runs import (
    CAPABILITIES,
    CARRIED_POOL,
    CONTINUED,
    TOKEN_LIMITS,
    TOOL_LIMIT,
    Contract,
    Limits,
    Meters,
    Observed,
    RunBudgetAdapter,
    Segment,
    Step,
)
from ctxaudit.invariants.budget import Meters as Shown
from ctxaudit.invariants.budget import Request, check_run, limits_of, report
from model.budget import Budget, Cap
from model.config import Caps

#: the registered finding whose region a response is in: (the model before it, the input
#: tokens of each of its requests, their output tokens) -> the finding's id, or None
LeftOut = Callable[[Budget, tuple[int, ...], tuple[int, ...]], str | None]

CUMULATIVE = frozenset({Cap.INPUT, Cap.OUTPUT, Cap.TOTAL})

#: the shape coverage this lockstep reports (ctxaudit/shapes.py): runs outside the known
#: findings' regions, by where they started and how they ended
RUNS = "budget: the entry point × how the run ended"
ENDS = ("completes", "refused before its first request", "stops on a limit")


def caps(limits: Limits, contract: Contract) -> Caps:
    """The model's caps for ``limits`` under the harness's documented contract. A
    response is counted once whatever its requests (a tool call costs no share of a
    request)."""

    def cap(value: int | None) -> int:
        return -1 if value is None else value

    return Caps(
        max_iterations=float(cap(limits.requests)),
        max_input_tokens=cap(limits.input),
        max_output_tokens=cap(limits.output),
        max_total_tokens=cap(limits.total),
        max_request_input_tokens=cap(limits.request_input),
        max_tool_calls=cap(limits.tool_calls),
        tool_call_weight=0.0,
        at_cap=contract.at_cap,
        zero_is_cap=contract.zero_is_cap,
        refuse_over_cap=contract.refuse_over_cap,
    )


@dataclass(frozen=True)
class Expected:
    requests_received: int
    seen_by_tools: tuple[tuple[int, int, int], ...]
    stops_on: frozenset[Cap]  # empty: the run completes
    pool: Meters


def expect(
    pool: Meters, limits: Limits, contract: Contract, steps: tuple[Step, ...], left_out: LeftOut
) -> Expected | str:
    """The model's run, or the id of the registered finding whose region it enters."""
    b = Budget(
        caps(limits, contract),
        input=pool.input,
        output=pool.output,
        credit=float(pool.requests),
        tool_calls=pool.tool_calls,
    )
    received = 0
    seen: list[tuple[int, int, int]] = []

    def end(stops: frozenset[Cap], budget: Budget) -> Expected:
        meters = Meters(int(budget.credit), budget.input, budget.output, budget.tool_calls)
        return Expected(received, tuple(seen), stops, meters)

    for step in steps:
        inputs = tuple(s.input for s in step.segments)
        finding = left_out(b, inputs, tuple(s.output for s in step.segments))
        if finding is not None:
            return finding
        refused = b.refusing()
        if refused:
            return end(refused, b)
        if len(step.segments) > 1:
            # a continued response: its tokens are checked after each of its requests,
            # and a response a check stops is metered but never counted
            partial = b
            for s in step.segments:
                received += 1
                partial = partial.metered(s.input - s.cached, s.output, s.cached, 0)
                reached = partial.hard_caps(0.0) & CUMULATIVE
                if reached:
                    return end(reached, partial)
        else:
            received += 1
        b, reached = b.llm_call(
            prompt=sum(s.input - s.cached for s in step.segments),
            completion=sum(s.output for s in step.segments),
            cache_read=sum(s.cached for s in step.segments),
            cache_write=0,
            elapsed=0.0,
            request_input=step.segments[-1].input,
        )
        if reached:
            return end(reached, b)
        if not step.tools:
            return end(frozenset(), b)
        after, refused = b.tool_batch(step.tools)
        if refused:
            return end(refused, b)
        seen += [(int(b.credit), b.input, b.output)] * step.tools
        b = after
    raise AssertionError("a script ends with a text answer")


def shown(m: Meters) -> Shown:
    """A pool as the invariants see it (the request count is what the call cap counts)."""
    return Shown(float(m.requests), m.input, m.output, tool_calls=m.tool_calls)


def check_invariants(
    pool: Meters,
    limits: Limits,
    contract: Contract,
    steps: tuple[Step, ...],
    got: Observed,
    tool_meter: bool = True,
) -> None:
    """BI1-BI5 on one run: the requests it made are the first ones of the script (the
    faked LLM answers them in order), each tool that ran saw the meters then (and, where
    the harness keeps a tool-call meter, counted one each)."""
    made = [s for step in steps for s in step.segments][: got.requests_received]
    broken = check_run(
        shown(pool),
        [Shown(float(r), i, o, tool_calls=pool.tool_calls) for r, i, o in got.seen_by_tools],
        shown(got.pool),
        limits_of(caps(limits, contract)),
        requests=[Request(s.input, s.output) for s in made],
        tools_run=len(got.seen_by_tools) if tool_meter else 0,
        stopped_on=got.raised,
    )
    assert not broken, report(broken, "the run")


segments = st.builds(
    lambda i, c, o: Segment(i, min(c, i), o),
    st.integers(1, 20),
    st.one_of(st.just(0), st.integers(0, 20)),
    st.integers(1, 10),
)


@st.composite
def scripts(draw: st.DrawFn, continued: bool = True) -> tuple[Step, ...]:
    """Tool-call batches, then the final answer; a response is two requests at most
    (one, where the harness has no continued responses)."""
    responses = st.lists(segments, min_size=1, max_size=2 if continued else 1).map(tuple)
    batches = draw(st.lists(st.integers(1, 3), max_size=3))
    steps = [Step(draw(responses), n) for n in batches]
    return (*steps, Step(draw(responses), 0))


def marks(pool: Meters, steps: tuple[Step, ...]) -> dict[str, list[int]]:
    """What each limit's meter reads before the run and after each request of it when
    nothing stops it: the values a limit is drawn around."""
    seen = {k: [v] for k, v in asdict(pool).items()} | {"total": [pool.input + pool.output]}
    seen["request_input"] = []
    for step in steps:
        for s in step.segments:
            seen["input"].append(seen["input"][-1] + s.input)
            seen["output"].append(seen["output"][-1] + s.output)
            seen["total"].append(seen["input"][-1] + seen["output"][-1])
            seen["request_input"] += [s.input, sum(x.input for x in step.segments)]
        seen["requests"].append(seen["requests"][-1] + 1)
        seen["tool_calls"].append(seen["tool_calls"][-1] + step.tools)
    return seen


def around(values: list[int]) -> st.SearchStrategy[int | None]:
    """Off, or one below, at or one above a value the meter takes (0 is a limit too)."""
    near = st.sampled_from(values).flatmap(lambda v: st.sampled_from([v - 1, v, v + 1]))
    return st.one_of(st.none(), near.map(lambda v: max(v, 0)))


#: the limits a capability brings (the request limit every harness has)
LIMITS_OF = {
    TOKEN_LIMITS: ("input", "output", "total", "request_input"),
    TOOL_LIMIT: ("tool_calls",),
}


@st.composite
def limits_for(
    draw: st.DrawFn, pool: Meters, steps: tuple[Step, ...], has: frozenset[str] = CAPABILITIES
) -> Limits:
    """Each limit the harness has drawn around the values its meter takes; the others off."""
    seen = marks(pool, steps)
    lacks = {name for cap, names in LIMITS_OF.items() if cap not in has for name in names}
    return Limits(
        **{name: draw(around(values)) for name, values in seen.items() if name not in lacks}
    )


pools = st.builds(
    Meters, st.integers(0, 3), st.integers(0, 60), st.integers(0, 30), st.integers(0, 4)
)


def never(_budget: Budget, _inputs: tuple[int, ...], _outputs: tuple[int, ...]) -> None:
    """No registered finding: every run is compared."""
    return None


def make_machine(
    adapter: RunBudgetAdapter, left_out: LeftOut = never
) -> type[RuleBasedStateMachine]:
    """The run lockstep of ``adapter``'s agent loop (``left_out``: its target's
    registered findings' regions)."""
    contract, has = adapter.contract, adapter.capabilities
    unknown = has - CAPABILITIES
    if unknown:
        raise ValueError(f"{adapter.name}: unknown capabilities {sorted(unknown)}")
    tool_meter = TOOL_LIMIT in has
    shapes.declare(RUNS, ("entry point", adapter.entry_points), ("the run", ENDS))

    class RunBudgetLockstep(RuleBasedStateMachine):
        @initialize()
        def setup(self) -> None:
            note(adapter.name)
            self.pool = Meters(0, 0, 0, 0)

        if CARRIED_POOL in has:

            @rule(pool=pools)
            def carry_in(self, pool: Meters) -> None:
                """The next runs meter into usage that is already there."""
                note(f"pool = {pool!r}")
                self.pool = pool

        @rule(data=st.data())
        def agent_run(self, data: st.DataObject) -> None:
            if CARRIED_POOL not in has:  # each run meters from nothing
                self.pool = Meters(0, 0, 0, 0)
            steps = data.draw(scripts(CONTINUED in has))
            limits = data.draw(limits_for(self.pool, steps, has))
            entry = data.draw(st.sampled_from(adapter.entry_points))
            note(f"run({steps!r}, {limits!r}, entry={entry!r}) on {self.pool!r}")
            expected = expect(self.pool, limits, contract, steps, left_out)
            if not tool_meter and not isinstance(expected, str):  # it counts no tool calls
                expected = replace(expected, pool=replace(expected.pool, tool_calls=0))
            observed = adapter.run(steps, limits, self.pool, entry)
            note(f"observed {observed!r}")
            if isinstance(expected, str):
                event(f"left out: {expected}")
                self.pool = observed.pool  # the model takes the harness's meters
                return
            event(f"stops on {sorted(expected.stops_on)}" if expected.stops_on else "completes")
            check_invariants(self.pool, limits, contract, steps, observed, tool_meter)
            ended = "stops on a limit" if observed.raised else "completes"
            if observed.raised and observed.requests_received == 0:
                ended = "refused before its first request"
            shapes.reached(RUNS, entry, ended)
            compare(observed, expected)
            self.pool = observed.pool

    return RunBudgetLockstep


def compare(observed: Observed, expected: Expected) -> None:
    """The harness's run against the model's, each difference opening with the property
    it counts against (B3: a request made or refused; B1: the meters; B2 or B3: the
    limit the run stopped on, a token limit's or the request and tool-call limits')."""
    assert observed.requests_received == expected.requests_received, (
        f"B3: the LLM received {observed.requests_received} request(s), "
        f"expected {expected.requests_received} (run stopped on {observed.message!r})"
    )
    assert observed.seen_by_tools == expected.seen_by_tools, (
        f"B1: the meters (requests, input, output) the tool calls saw: "
        f"{observed.seen_by_tools}, expected {expected.seen_by_tools}"
    )
    if expected.stops_on:
        prop = "B3" if expected.stops_on & {Cap.ITERATIONS, Cap.TOOL_CALLS} else "B2"
        assert observed.raised in expected.stops_on, (
            f"{prop}: expected the run to stop on one of {sorted(expected.stops_on)}, "
            f"it {'stopped on ' + repr(observed.message) if observed.raised else 'completed'}"
        )
    else:
        prop = "B3" if observed.raised in (Cap.ITERATIONS, Cap.TOOL_CALLS) else "B2"
        assert observed.raised is None, f"{prop}: no limit is passed, yet: {observed.message!r}"
    assert observed.pool == expected.pool, (
        f"B1: meters after the run {observed.pool}, expected {expected.pool}"
    )


def run_lockstep(
    adapter: RunBudgetAdapter, left_out: LeftOut = never, settings: Any = None
) -> None:
    """Run the run lockstep on ``adapter`` as one test (under the current profile, or
    ``settings``)."""
    run_state_machine_as_test(make_machine(adapter, left_out), settings=settings)
