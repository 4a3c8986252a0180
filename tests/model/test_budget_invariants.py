"""The model's budget (``model/budget.py``) held to the budget's invariants (BI1-BI5,
``ctxaudit/invariants/budget.py``), with no target involved: the model is the oracle
of the gitreins and pydantic-ai locksteps, so where it breaks an invariant a target
that agrees with it passes for the wrong reason.

Every operation the locksteps drive (LLM calls, tool calls, tool batches, checks,
clock moves, context resets), in any order, under caps drawn small and with token
counts aimed at them, so meters land on, under and past them, with the
specification's rules (gitreins: reached at the cap, 0 no cap) and pydantic-ai's
documented ones (reached past it, 0 a cap, a call refused over a token cap, total,
per-request and tool-call caps). The model refuses a call by returning the budget it
was given; that is what "refused" is read from.
"""

from __future__ import annotations

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from ctxaudit.invariants.budget import Limits, Meters, Step, check_step, limits_of
from model.budget import Budget, Cap
from model.config import Caps

pytestmark = pytest.mark.properties("B1", "B2", "B3", "B4", "B5")

SMALL = st.sampled_from([-1, 0, 1, 5, 12, 30])

caps = st.builds(
    Caps,
    max_iterations=st.sampled_from([-1.0, 0.0, 1.0, 2.0, 2.5, 4.0]),
    max_seconds=st.sampled_from([-1.0, 0.0, 3.0]),
    max_input_tokens=SMALL,
    max_output_tokens=SMALL,
    tool_call_weight=st.sampled_from([0.0, 0.1, 0.5, 1.0]),
    max_total_tokens=SMALL,
    max_request_input_tokens=SMALL,
    max_tool_calls=st.sampled_from([-1, 0, 1, 3]),
    at_cap=st.booleans(),
    zero_is_cap=st.booleans(),
    refuse_over_cap=st.booleans(),
)


def meters(b: Budget) -> Meters:
    return Meters(
        b.credit, b.input, b.output, b.cache_read, b.cache_write, b.tool_calls, b.request_input
    )


def near(data: st.DataObject, used: int, cap: int, label: str) -> int:
    """A token count that puts a meter on its cap, one off, or anywhere."""
    if cap >= 0 and used <= cap and data.draw(st.booleans(), label=f"{label}_aim"):
        gap = cap - used
        return data.draw(st.sampled_from([gap - 1, gap, gap + 1]).filter(lambda n: n >= 0), label)
    return data.draw(st.integers(0, 12), label=label)


class ModelBudget(RuleBasedStateMachine):
    """Every operation on the model, each held to the invariants on what it returns."""

    @initialize(c=caps, started=st.booleans())
    def setup(self, c: Caps, started: bool) -> None:
        self.limits = limits_of(c)
        self.budget = Budget(c).start() if started else Budget(c)
        self.elapsed = 0.0

    def step(self, after: Budget, caps: frozenset[Cap], step: Step) -> None:
        """Hold one operation's result to the invariants; the model refused a call
        when it returned the budget it was given."""
        refused = step.kind in ("call", "tool", "batch") and after is self.budget
        broken = check_step(
            meters(self.budget),
            meters(after),
            step,
            self.limits,
            refused=refused,
            reported=frozenset(caps),
            elapsed=self.elapsed if after.started else None,
        )
        assert not broken, f"the model broke the budget's invariants ({step}):\n" + "\n".join(
            broken
        )
        self.budget = after

    @rule(data=st.data(), cache_read=st.sampled_from([0, 0, 3]),
          cache_write=st.sampled_from([0, 0, 2]), whole=st.booleans())  # fmt: skip
    def llm_call(self, data: st.DataObject, cache_read: int, cache_write: int, whole: bool) -> None:
        """A call whose tokens land on, beside or anywhere near a cap; ``whole``: its
        request is sent the whole context (else a request of its own size)."""
        b, c = self.budget, self.budget.caps
        prompt = near(data, b.input + cache_read + cache_write, c.max_input_tokens, "prompt")
        completion = near(data, b.output, c.max_output_tokens, "completion")
        sent = prompt + cache_read + cache_write
        request = None if whole else near(data, 0, c.max_request_input_tokens, "request")
        after, reported = b.llm_call(
            prompt=prompt,
            completion=completion,
            cache_read=cache_read,
            cache_write=cache_write,
            elapsed=self.elapsed,
            request_input=request,
        )
        usage = Meters(1.0, sent, completion, cache_read, cache_write, 0,
                       sent if request is None else request)  # fmt: skip
        self.step(after, reported, Step("call", usage))

    @rule()
    def tool_call(self) -> None:
        after, reported = self.budget.tool_call(elapsed=self.elapsed)
        self.step(after, reported, Step("tool", Meters(calls=self.budget.caps.tool_call_weight)))

    @rule(calls=st.integers(1, 3))
    def tool_batch(self, calls: int) -> None:
        after, reported = self.budget.tool_batch(calls)
        self.step(after, reported, Step("batch", Meters(tool_calls=calls)))

    @rule()
    def check(self) -> None:
        self.step(self.budget, self.budget.hard_caps(self.elapsed), Step("check"))

    @rule(seconds=st.sampled_from([0.5, 1.0, 3.0]))
    def move_clock(self, seconds: float) -> None:
        self.elapsed += seconds
        self.step(self.budget, frozenset(), Step("clock"))

    @rule()
    def reset(self) -> None:
        self.step(self.budget.reset(), frozenset(), Step("reset"))


TestModelBudget = ModelBudget.TestCase


def ids(broken: list[str]) -> set[str]:
    return {line.split(":")[0] for line in broken}


def test_the_checks_see_a_broken_meter() -> None:
    """The checks fail on meters that break them: a call recorded with the credit at
    the iteration cap, a reset that forgets the output, a refusal that meters, a cap
    reported that is not reached and one reached that is not reported."""
    limits = Limits(calls=1.0, input=10)
    at_cap = Meters(calls=1.0, input=4, output=4)
    call = Step("call", Meters(1.0, 3, 1, request_input=3))
    recorded = at_cap._replace(calls=2.0, input=7, output=5, request_input=3)
    none: frozenset[str] = frozenset()
    assert ids(check_step(at_cap, recorded, call, limits, refused=False, reported=none)) == {"BI3"}
    half = at_cap._replace(input=0)
    assert ids(check_step(at_cap, half, Step("reset"), limits, refused=False, reported=none)) == {
        "BI1"
    }
    iterations = frozenset({"iterations"})
    assert ids(check_step(at_cap, recorded, call, limits, refused=True, reported=iterations)) == {
        "BI4"
    }
    full = Meters(input=10)
    assert ids(check_step(full, full, Step("check"), limits, refused=False, reported=none)) == {
        "BI5"
    }
    assert ids(check_step(at_cap, at_cap, Step("check"), limits, refused=False,
                          reported=frozenset({"input"}))) == {"BI5"}  # fmt: skip
