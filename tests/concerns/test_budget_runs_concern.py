"""The budget concern's shared run lockstep (``ctxaudit/concerns/budget_runs.py``) on a
plain agent loop written here from the properties alone (B1-B3: a run's requests and
tokens against usage limits, under a declared contract): it holds on the loop as
written, under two contracts, from both entry points; it fails on each planted break
with the property it breaks; and its shared suite finds the adapter a target names."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from hypothesis import HealthCheck, Phase, settings

from ctxaudit.concerns.budget_runs import (
    CAPABILITIES,
    TOOL_LIMIT,
    Contract,
    Limits,
    Meters,
    Observed,
    Step,
)
from ctxaudit.locksteps.budget_runs import run_lockstep

#: the examples of one run: enough to reach the limits the strategies aim at
QUICK = settings(
    max_examples=80, stateful_step_count=10, derandomize=True, database=None, deadline=None,
    suppress_health_check=list(HealthCheck),
)  # fmt: skip
#: whether a break fails, and on which property, is asked: the first failing example
#: answers it, unshrunk
FIRST_FAILURE = settings(QUICK, phases=[Phase.generate])

PAST = Contract(at_cap=False, zero_is_cap=True, refuse_over_cap=True, quoted="the test's")
AT = Contract(at_cap=True, zero_is_cap=False, refuse_over_cap=False, quoted="the test's")


class Stop(Exception):
    def __init__(self, limit: str) -> None:
        super().__init__(f"the {limit} limit")
        self.limit = limit


@dataclasses.dataclass
class Loop:
    """An agent loop: before each request the request limit (and, under
    ``refuse_over_cap``, the token limits) may refuse it; each request's tokens are
    metered, a continued response's checked after each of its requests; a response is
    counted once, then its tokens are checked; a batch of tool calls that would pass the
    tool-call limit is refused whole."""

    contract: Contract
    breaks: frozenset[str] = frozenset()
    name: str = "the test's agent loop"
    entry_points: tuple[str, ...] = ("sync", "async")
    capabilities: frozenset[str] = CAPABILITIES

    def run(self, steps: tuple[Step, ...], limits: Limits, pool: Meters, entry: str) -> Observed:
        m = dataclasses.asdict(pool)
        seen: list[tuple[int, int, int]] = []
        received = [0]
        try:
            if entry == "async":
                asyncio.run(self._async(steps, limits, m, seen, received))
            else:
                self._loop(steps, limits, m, seen, received)
            raised = None
        except Stop as stop:
            raised = stop.limit
        message = None if raised is None else f"the {raised} limit"
        if TOOL_LIMIT not in self.capabilities:  # it keeps no tool-call meter
            m["tool_calls"] = 0
        return Observed(received[0], tuple(seen), raised, message, Meters(**m))

    async def _async(self, *args: object) -> None:
        self._loop(*args)  # type: ignore[arg-type]

    def capped(self, limit: int | None) -> bool:
        return limit is not None and (limit > 0 or (self.contract.zero_is_cap and limit == 0))

    def over(self, used: int, limit: int | None) -> bool:
        at = self.contract.at_cap != ("limit at its value" in self.breaks)
        return self.capped(limit) and (used >= limit if at else used > limit)  # type: ignore[operator]

    def tokens(self, m: dict[str, int], limits: Limits, skip: str = "") -> None:
        for name, used, limit in (
            ("input", m["input"], limits.input),
            ("output", m["output"], limits.output),
            ("total", m["input"] + m["output"], limits.total),
        ):
            if name != skip and self.over(used, limit):
                raise Stop(name)

    def _loop(
        self,
        steps: tuple[Step, ...],
        limits: Limits,
        m: dict[str, int],
        seen: list[tuple[int, int, int]],
        received: list[int],
    ) -> None:
        for step in steps:
            past = m["requests"] > limits.requests if limits.requests is not None else False
            at = m["requests"] >= limits.requests if limits.requests is not None else False
            if self.capped(limits.requests) and (
                past if "request at the limit" in self.breaks else at
            ):
                raise Stop("iterations")
            if self.contract.refuse_over_cap:
                self.tokens(
                    m, limits, skip="output" if "precheck skips output" in self.breaks else ""
                )
            for seg in step.segments:
                received[0] += 1
                m["input"] += seg.input
                m["output"] += 0 if "output unmetered" in self.breaks else seg.output
                if len(step.segments) > 1:
                    self.tokens(m, limits)
            m["requests"] += 1
            self.tokens(m, limits)
            if self.over(step.segments[-1].input, limits.request_input):
                raise Stop("request-input")
            if not step.tools:
                return
            batch = m["tool_calls"] + step.tools
            whole = "tool batch past the limit" not in self.breaks  # the batch is refused whole
            if whole and self.capped(limits.tool_calls) and batch > limits.tool_calls:  # type: ignore[operator]
                raise Stop("tool-calls")
            shown = m["requests"] - ("tools see the count before" in self.breaks)
            for _ in range(step.tools):
                seen.append((shown, m["input"], m["output"]))
            m["tool_calls"] += step.tools


@pytest.mark.parametrize("contract", [PAST, AT], ids=["past the limit", "at the limit"])
def test_the_loop_as_written_holds(contract: Contract) -> None:
    run_lockstep(Loop(contract), settings=QUICK)


#: a harness with a request limit only (openai-agents' ``max_turns``): no token or
#: tool-call limit, no tool-call meter, no usage carried between runs, no continuations
REQUESTS_ONLY = frozenset[str]()


@pytest.mark.parametrize("brk", ["", "request at the limit", "output unmetered"])
def test_a_harness_with_a_request_limit_only(brk: str) -> None:
    """Only what the harness has is drawn: the loop holds, and a break of what it has
    still fails with its property."""
    loop = Loop(PAST, frozenset({brk} - {""}), capabilities=REQUESTS_ONLY)
    if not brk:
        run_lockstep(loop, settings=QUICK)
        return
    with pytest.raises(AssertionError) as failed:
        run_lockstep(loop, settings=FIRST_FAILURE)
    assert str(failed.value).startswith("B3:" if "request" in brk else "B1:"), failed.value


def test_a_capability_no_lockstep_knows_is_refused() -> None:
    from ctxaudit.locksteps.budget_runs import make_machine

    with pytest.raises(ValueError, match="unknown capabilities"):
        make_machine(Loop(PAST, capabilities=frozenset({"streaming"})))


@pytest.mark.parametrize(
    ("brk", "prop"),
    [
        ("limit at its value", "B2"),
        ("output unmetered", "B1"),
        ("request at the limit", "B3"),
        ("precheck skips output", "B3"),
        ("tool batch past the limit", "B3"),
        # no invariant sees it (a tool may be shown any count that never goes back):
        # the model comparison does, and says which property
        ("tools see the count before", "B1"),
    ],
)
def test_each_planted_break_fails_with_its_property(brk: str, prop: str) -> None:
    """The invariants, which do not trust the model, see each break first."""
    with pytest.raises(AssertionError) as failed:
        run_lockstep(Loop(PAST, frozenset({brk})), settings=FIRST_FAILURE)
    assert str(failed.value).startswith(f"{prop}:"), failed.value


def test_the_shared_suite_drives_the_adapter_a_target_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A target that names a ``budget-runs`` adapter gets the run lockstep from the
    shared suites, with no test of its own."""
    from types import SimpleNamespace

    from ctxaudit import targets
    from ctxaudit.targets import concern_suites

    assert concern_suites.suites_for({"budget-runs": "x:y"}) == (
        str(concern_suites.HERE / "test_budget_runs.py"),
    )
    kind = SimpleNamespace(concerns={"budget-runs": f"{__name__}:_factory"}, resolve=str)
    monkeypatch.setattr(targets, "get", lambda name: kind)
    config = SimpleNamespace(getoption=lambda name: "toy" if "target" in name else "1.0")
    built = concern_suites.adapter(config, "budget-runs")  # type: ignore[arg-type]
    assert isinstance(built, Loop) and built.name == "the loop of 1.0"


def _factory(version: str) -> Loop:
    return Loop(PAST, name=f"the loop of {version}")
