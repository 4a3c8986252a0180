"""The budget lockstep (B1-B5): any harness's meter, through its adapter
(:mod:`ctxaudit.concerns.budget`), beside ``model.budget.Budget``.

:func:`make_machine` builds the lockstep for an adapter: every step is applied to
both; each step of the meter is first held to the budget's invariants (BI1-BI5,
:mod:`ctxaudit.invariants.budget`), which do not trust the model, then its counters
and the cap it reports are compared with the model's. Token counts are drawn relative
to the caps, so the meters land on a cap, one below and one above it on purpose. A
rule whose capability the harness lacks is never drawn.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from ctxaudit import stats
from ctxaudit.concerns.budget import (
    CACHE,
    CAPABILITIES,
    CHECK,
    RESET,
    T0,
    TIME,
    TOOL_CALLS,
    BudgetAdapter,
    BudgetMeter,
    Call,
)
from ctxaudit.invariants.budget import Meters, Step, check_step, limits_of, report
from model.budget import Budget, Cap
from model.config import Caps


def caps_strategy(capabilities: frozenset[str]) -> st.SearchStrategy[Caps]:
    """The caps drawn (a value <= 0 is no cap): at, around and far from small meters."""
    # a call cap between whole calls (2.5) matters only where a tool call costs a share
    # of a call; a meter that counts whole calls takes a whole number
    calls = (
        [-1.0, 0.0, 1.0, 2.0, 3.0, 2.5, 5.0]
        if TOOL_CALLS in capabilities
        else [-1.0, 0.0, 1.0, 2.0, 3.0, 5.0]
    )
    return st.builds(
        Caps,
        max_iterations=st.sampled_from(calls),
        max_seconds=st.sampled_from([-1.0, 0.0, 5.0, 60.0])
        if TIME in capabilities
        else st.just(-1.0),
        max_input_tokens=st.sampled_from([-1, 0, 1, 10, 100, 1000]),
        max_output_tokens=st.sampled_from([-1, 0, 1, 10, 100]),
        tool_call_weight=st.sampled_from([0.1, 0.25, 0.5, 1.0])
        if TOOL_CALLS in capabilities
        else st.just(1.0),
    )


def near(data: st.DataObject, used: int, cap: int, label: str) -> int:
    """A token count that puts the meter at the cap, one off, or anywhere."""
    if cap > 0 and used < cap and data.draw(st.booleans(), label=f"{label}_aim"):
        gap = cap - used
        return data.draw(st.sampled_from([gap - 1, gap, gap + 1]).filter(lambda n: n >= 0), label)
    return data.draw(st.integers(0, 60), label=label)


def check_report(prop: str, got: str | None, expected: frozenset[Cap]) -> None:
    """The cap a step reported is one the model reports (or none where it reports none)."""
    if expected:
        assert got in expected, f"{prop}: expected a cap in {sorted(expected)}, got {got!r}"
    else:
        assert got is None, f"{prop}: no cap is reached, but the target reported {got!r}"


def make_machine(adapter: BudgetAdapter) -> type[RuleBasedStateMachine]:
    """The budget lockstep of ``adapter``'s meter (a rule per capability it has)."""
    has = adapter.capabilities
    unknown = has - CAPABILITIES
    if unknown:
        raise ValueError(f"{adapter.name}: unknown capabilities {sorted(unknown)}")
    cache_counts = st.sampled_from([0, 0, 1, 7]) if CACHE in has else st.just(0)
    cache_writes = st.sampled_from([0, 0, 2, 5]) if CACHE in has else st.just(0)

    class BudgetLockstep(RuleBasedStateMachine):
        model: Budget
        target: BudgetMeter
        elapsed: float

        @initialize(caps=caps_strategy(has), started=st.sampled_from([True, True, True, False]))
        def setup(self, caps: Caps, started: bool) -> None:
            self.model = Budget(caps)
            self.target = adapter.meter(caps)
            self.limits = limits_of(caps)
            self.elapsed = 0.0
            if started:
                self.model = self.model.start()
                self.target.start(T0)

        def now(self) -> float:
            """The wall time the meter reads, at exactly ``elapsed`` (B4)."""
            return T0 + self.elapsed

        def hold_to_invariants(self, before: Meters, step: Step, got: str | None) -> None:
            """BI1-BI5 on one step of the meter. It refuses a call by reporting the call
            cap (the only one reported before recording: the token and time caps are
            reported after the call is recorded)."""
            elapsed = self.elapsed if self.model.started else None
            broken = check_step(
                before,
                self.target.meters(),
                step,
                self.limits,
                refused=step.kind in ("call", "tool") and got == Cap.ITERATIONS,
                reported=frozenset() if got is None else frozenset({got}),
                elapsed=elapsed,
            )
            assert not broken, report(broken, adapter.name)

        def call(self, call: Call) -> None:
            """One LLM call on both, its step held to the invariants, its report compared."""
            m = self.model
            before = self.target.meters()
            self.model, expected = m.llm_call(
                prompt=call.prompt,
                completion=call.completion,
                cache_read=call.cache_read,
                cache_write=call.cache_write,
                elapsed=self.elapsed,
            )
            got = self.target.record_call(call, self.now())
            sent = call.prompt + call.cache_read + call.cache_write
            usage = Meters(1.0, sent, call.completion, call.cache_read, call.cache_write)
            self.hold_to_invariants(before, Step("call", usage), got)  # no per-call gauge
            check_report("B2/B3", got, expected)

        @rule(data=st.data())
        def llm_call(self, data: st.DataObject) -> None:
            m, c = self.model, self.model.caps
            prompt = near(data, m.input, c.max_input_tokens, "prompt")
            cache_read = data.draw(cache_counts, label="cache_read")
            cache_write = data.draw(cache_writes, label="cache_write")
            completion = near(data, m.output, c.max_output_tokens, "completion")
            self.call(Call(prompt, completion, cache_read, cache_write))

        def below_caps(self) -> list[str]:
            """The token meters under a cap they have not reached."""
            m, c = self.model, self.model.caps
            meters = {
                "input": (m.input, c.max_input_tokens),
                "output": (m.output, c.max_output_tokens),
            }
            return [name for name, (used, cap) in meters.items() if cap > 0 and used < cap]

        @precondition(lambda self: bool(self.below_caps()))
        @rule(meter=st.sampled_from(["input", "output"]))
        def call_onto_a_cap(self, meter: str) -> None:
            """B2's boundary, reached on purpose: a call that takes one token meter
            exactly to its cap and adds nothing to the other (the other meter where the
            one drawn has no cap below it)."""
            below = self.below_caps()
            meter = meter if meter in below else below[0]
            m, c = self.model, self.model.caps
            if meter == "input":
                self.call(Call(c.max_input_tokens - m.input, 0))
            else:
                self.call(Call(0, c.max_output_tokens - m.output))

        if TOOL_CALLS in has:

            @rule()
            def tool_call(self) -> None:
                self.model, expected = self.model.tool_call(elapsed=self.elapsed)
                before = self.target.meters()
                got = self.target.record_tool_call(self.now())
                weight = Meters(self.model.caps.tool_call_weight)
                self.hold_to_invariants(before, Step("tool", weight), got)
                check_report("B3", got, expected)

        if CHECK in has:

            @rule()
            def check(self) -> None:
                before = self.target.meters()
                got = self.target.check(self.now())
                self.hold_to_invariants(before, Step("check"), got)
                check_report("B2/B4", got, self.model.hard_caps(self.elapsed))

        if TIME in has:

            @precondition(lambda self: self.model.started)
            @rule(to=st.sampled_from(["below", "at", "past", "anywhere"]))
            def move_clock(self, to: str) -> None:
                cap = self.model.caps.max_seconds
                before = self.target.meters()
                if cap > 0 and to != "anywhere":
                    self.elapsed = {"below": cap - 1, "at": cap, "past": cap + 1}[to]
                else:
                    self.elapsed += 1.0
                self.hold_to_invariants(before, Step("clock"), None)

        if RESET in has:

            @rule()
            def reset(self) -> None:
                self.model = self.model.reset()
                before = self.target.meters()
                self.target.reset()
                self.hold_to_invariants(before, Step("reset"), None)

        steps = 0

        def teardown(self) -> None:
            stats.example_done("BudgetLockstep", self.steps)

        @invariant()
        def meters_agree(self) -> None:
            self.steps += 1
            m, t = self.model, self.target.meters()
            got = (t.input, t.output)
            assert got == (m.input, m.output), (
                f"B1: meters (input, output) {got} != {(m.input, m.output)}"
            )
            cache = (t.cache_read, t.cache_write)
            assert cache == (m.cache_read, m.cache_write), f"B1: cache meters {cache}"
            assert t.calls == m.credit, f"B3: credit {t.calls} != {m.credit}"

    return BudgetLockstep


def run_lockstep(adapter: BudgetAdapter, settings: Any = None) -> None:
    """Run the budget lockstep on ``adapter`` as one test (under the current profile,
    or ``settings``)."""
    run_state_machine_as_test(make_machine(adapter), settings=settings)
