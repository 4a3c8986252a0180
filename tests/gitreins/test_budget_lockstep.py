"""B1-B5: gitreins' EvalCap in lockstep with model.budget.

Every call, tool call, check, clock move and reset is applied to both; the
meters, the credit and the reported cap are compared after each step.
Token counts are drawn relative to the caps, so the meters land on the cap,
one below and one above it on purpose. Before the comparison, every step of the
target is held to the budget's invariants (BI1-BI5, ``ctxaudit/invariants/budget.py``),
which do not trust the model: no counter goes back but at a reset, a call meters
exactly what it reported, none is accepted at the iteration cap, a refusal changes
nothing, a cap reached is reported and a cap reported is reached.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import pytest
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
from ctxaudit.invariants.budget import Limits, Meters, Step, check_step, limits_of, report
from ctxaudit.targets.gitreins.tree import GitreinsModules
from model.budget import Budget, Cap
from model.config import Caps

pytestmark = [pytest.mark.gitreins, pytest.mark.properties("B1", "B2", "B3", "B4", "B5")]

CAP_WORDS = {
    "Iteration cap": Cap.ITERATIONS,
    "Time cap": Cap.TIME,
    "Input token budget": Cap.INPUT,
    "Output token budget": Cap.OUTPUT,
}


def reported(message: str | None) -> Cap | None:
    if message is None:
        return None
    for words, cap in CAP_WORDS.items():
        if message.startswith(words):
            return cap
    raise AssertionError(f"unrecognised cap message: {message!r}")


def meters(cap: Any) -> Meters:
    """What EvalCap shows (the iteration credit is what its call cap counts)."""
    return Meters(
        cap.iteration_credit,
        cap.cumulative_input_tokens,
        cap.cumulative_output_tokens,
        cap.cumulative_cache_read,
        cap.cumulative_cache_write,
    )


def check_invariants(
    before: Meters,
    target: Any,
    step: Step,
    limits: Limits,
    message: str | None,
    elapsed: float | None,
) -> None:
    """BI1-BI5 on one step of EvalCap. It refuses a call by returning the iteration cap's
    message (the only one it returns before recording: the token and time caps are
    reported after the call is recorded)."""
    cap = reported(message)
    broken = check_step(
        before,
        meters(target),
        step,
        limits,
        refused=step.kind in ("call", "tool") and cap == Cap.ITERATIONS,
        reported=frozenset() if cap is None else frozenset({cap}),
        elapsed=elapsed,
    )
    assert not broken, report(broken, "EvalCap")


def check_report(prop: str, message: str | None, expected: frozenset[Cap]) -> None:
    got = reported(message)
    if expected:
        assert got in expected, f"{prop}: expected a cap in {sorted(expected)}, got {message!r}"
    else:
        assert got is None, f"{prop}: no cap is reached, but the target reported {message!r}"


caps_strategy = st.builds(
    Caps,
    # 0 is "unlimited" too (a cap applies only when > 0)
    max_iterations=st.sampled_from([-1.0, 0.0, 1.0, 2.0, 3.0, 2.5, 5.0]),
    max_seconds=st.sampled_from([-1.0, 0.0, 5.0, 60.0]),
    max_input_tokens=st.sampled_from([-1, 0, 1, 10, 100, 1000]),
    max_output_tokens=st.sampled_from([-1, 0, 1, 10, 100]),
    tool_call_weight=st.sampled_from([0.1, 0.25, 0.5, 1.0]),
)


T0 = 1_800_000_000.0  # the moment the target's clock starts (any fixed wall time)


@contextlib.contextmanager
def clock_at(now: float) -> Iterator[None]:
    """Inject the clock: the target reads the wall clock through ``time.time``
    (the standard library, not gitreins internals); during one call it reads
    ``now``, so B4's boundary (elapsed == max_seconds) is exact."""
    real = time.time
    time.time = lambda: now
    try:
        yield
    finally:
        time.time = real


def near(data: st.DataObject, used: int, cap: int, label: str) -> int:
    """A token count that puts the meter at the cap, one off, or anywhere."""
    if cap > 0 and used < cap and data.draw(st.booleans(), label=f"{label}_aim"):
        gap = cap - used
        return data.draw(st.sampled_from([gap - 1, gap, gap + 1]).filter(lambda n: n >= 0), label)
    return data.draw(st.integers(0, 60), label=label)


def make_machine(mods: GitreinsModules) -> type[RuleBasedStateMachine]:
    class BudgetLockstep(RuleBasedStateMachine):
        model: Budget
        target: Any
        elapsed: float

        @initialize(caps=caps_strategy, started=st.sampled_from([True, True, True, False]))
        def setup(self, caps: Caps, started: bool) -> None:
            self.model = Budget(caps)
            self.target = mods.eval_cap.EvalCap(**caps.spec())
            self.limits = limits_of(caps)
            self.elapsed = 0.0
            if started:
                self.model = self.model.start()
                with clock_at(T0):
                    self.target.start()

        def _move_clock(self, elapsed: float) -> None:
            self.elapsed = elapsed

        def hold_to_invariants(self, before: Meters, step: Step, message: str | None) -> None:
            started = self.model.started
            elapsed = self.elapsed if started else None
            check_invariants(before, self.target, step, self.limits, message, elapsed)

        def now(self) -> Any:
            """The wall clock the target reads, at exactly ``elapsed`` (B4)."""
            return clock_at(T0 + self.elapsed)

        @rule(data=st.data())
        def llm_call(self, data: st.DataObject) -> None:
            m, c = self.model, self.model.caps
            prompt = near(data, m.input, c.max_input_tokens, "prompt")
            cache_read = data.draw(st.sampled_from([0, 0, 1, 7]), label="cache_read")
            cache_write = data.draw(st.sampled_from([0, 0, 2, 5]), label="cache_write")
            completion = near(data, m.output, c.max_output_tokens, "completion")
            before = meters(self.target)
            self.model, expected = m.llm_call(
                prompt=prompt,
                completion=completion,
                cache_read=cache_read,
                cache_write=cache_write,
                elapsed=self.elapsed,
            )
            with self.now():
                message = self.target.record_llm_call(
                    prompt_tokens=prompt,
                    completion_tokens=completion,
                    cache_read_tokens=cache_read,
                    cache_write_tokens=cache_write,
                )
            sent = prompt + cache_read + cache_write
            usage = Meters(1.0, sent, completion, cache_read, cache_write)  # no per-call gauge
            self.hold_to_invariants(before, Step("call", usage), message)
            check_report("B2/B3", message, expected)

        @rule()
        def tool_call(self) -> None:
            self.model, expected = self.model.tool_call(elapsed=self.elapsed)
            before = meters(self.target)
            with self.now():
                message = self.target.record_tool_call()
            weight = Meters(self.model.caps.tool_call_weight)
            self.hold_to_invariants(before, Step("tool", weight), message)
            check_report("B3", message, expected)

        @rule()
        def check(self) -> None:
            before = meters(self.target)
            with self.now():
                message = self.target.check()
            self.hold_to_invariants(before, Step("check"), message)
            check_report("B2/B4", message, self.model.hard_caps(self.elapsed))

        @precondition(lambda self: self.model.started)
        @rule(to=st.sampled_from(["below", "at", "past", "anywhere"]))
        def move_clock(self, to: str) -> None:
            cap = self.model.caps.max_seconds
            before = meters(self.target)
            if cap > 0 and to != "anywhere":
                self._move_clock({"below": cap - 1, "at": cap, "past": cap + 1}[to])
            else:
                self._move_clock(self.elapsed + 1.0)
            self.hold_to_invariants(before, Step("clock"), None)

        @rule()
        def reset(self) -> None:
            self.model = self.model.reset()
            before = meters(self.target)
            self.target.reset_context_tracking()
            self.hold_to_invariants(before, Step("reset"), None)

        steps = 0

        def teardown(self) -> None:
            stats.example_done("BudgetLockstep", self.steps)

        @invariant()
        def meters_agree(self) -> None:
            self.steps += 1
            m, t = self.model, self.target
            got = (t.cumulative_input_tokens, t.cumulative_output_tokens)
            assert got == (m.input, m.output), (
                f"B1: meters (input, output) {got} != {(m.input, m.output)}"
            )
            cache = (t.cumulative_cache_read, t.cumulative_cache_write)
            assert cache == (m.cache_read, m.cache_write), f"B1: cache meters {cache}"
            assert t.iteration_credit == m.credit, f"B3: credit {t.iteration_credit} != {m.credit}"

    return BudgetLockstep


def test_budget_lockstep(gitreins: GitreinsModules) -> None:
    run_state_machine_as_test(make_machine(gitreins))
