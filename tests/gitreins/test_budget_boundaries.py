"""B2-B4 at the edges the stateful suite draws rarely: a cap of 0 or -1 is no
cap (a cap applies only when > 0), and the boundary itself (>=). Fixed
programs, EvalCap against model.budget, on every commit."""

from __future__ import annotations

from typing import Any

import pytest

from ctxaudit.targets.gitreins import GitreinsModules
from model.budget import Budget
from model.config import Caps
from tests.gitreins.test_budget_lockstep import T0, check_report, clock_at

pytestmark = [pytest.mark.gitreins, pytest.mark.properties("B2", "B3", "B4")]

FIELDS = ["max_iterations", "max_seconds", "max_input_tokens", "max_output_tokens"]


def run(mods: GitreinsModules, caps: Caps, elapsed: float, calls: int, tokens: int) -> None:
    model = Budget(caps).start()
    target: Any = mods.eval_cap.EvalCap(**caps.model_dump())
    target.start()
    target.start_time -= elapsed + 0.001
    check_report("B2/B4", target.check(), model.hard_caps(elapsed))
    for _ in range(calls):
        model, expected = model.llm_call(
            prompt=tokens, completion=tokens, cache_read=0, cache_write=0, elapsed=elapsed
        )
        check_report("B2/B3/B4", target.record_llm_call(tokens, tokens), expected)
        model, expected = model.tool_call(elapsed=elapsed)
        check_report("B3/B4", target.record_tool_call(), expected)
    check_report("B2/B4", target.check(), model.hard_caps(elapsed))


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("value", [0, -1])
def test_zero_or_negative_cap_is_no_cap(gitreins: GitreinsModules, field: str, value: int) -> None:
    run(gitreins, Caps(**{field: value}), elapsed=10.0, calls=3, tokens=5)


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("offset", [-1, 0, 1])
def test_at_the_cap(gitreins: GitreinsModules, field: str, offset: int) -> None:
    """The meter (or clock) one below, at and one past a cap of 10."""
    elapsed = 10.0 + offset if field == "max_seconds" else 0.0
    run(gitreins, Caps(**{field: 10}), elapsed=elapsed, calls=1, tokens=10 + offset)


@pytest.mark.properties("B4")
def test_clock_not_started_reports_no_time_cap(gitreins: GitreinsModules) -> None:
    """B4 applies once the clock is started; before, no time has been spent."""
    target: Any = gitreins.eval_cap.EvalCap(max_seconds=5.0)
    model = Budget(Caps(max_seconds=5.0))
    check_report("B4", target.check(), model.hard_caps(elapsed=10.0))
    model, expected = model.llm_call(
        prompt=1, completion=1, cache_read=0, cache_write=0, elapsed=10.0
    )
    check_report("B4", target.record_llm_call(1, 1), expected)


@pytest.mark.properties("B4")
@pytest.mark.parametrize("offset", [-0.5, 0.0, 0.5])
def test_b4_time_boundary_is_exact(gitreins: GitreinsModules, offset: float) -> None:
    """B4's boundary is a single point: with the clock injected, exactly ``max_seconds``
    elapsed reaches the time cap (>=), half a second before does not. ``test_at_the_cap``
    moves the start back by a little more than ``elapsed``, so it cannot tell >= from >;
    the stateful lockstep can, but only when it draws that clock - this runs every time."""
    caps = Caps(max_seconds=10.0)
    model = Budget(caps).start()
    target: Any = gitreins.eval_cap.EvalCap(**caps.model_dump())
    with clock_at(T0):
        target.start()
    elapsed = 10.0 + offset
    with clock_at(T0 + elapsed):
        check_report("B4", target.check(), model.hard_caps(elapsed))
        model, expected = model.llm_call(
            prompt=1, completion=1, cache_read=0, cache_write=0, elapsed=elapsed
        )
        check_report("B4", target.record_llm_call(1, 1), expected)
        model, expected = model.tool_call(elapsed=elapsed)
        check_report("B4", target.record_tool_call(), expected)


@pytest.mark.properties("B4")
@pytest.mark.parametrize("elapsed", [0.5, 1.0, 2.0])
def test_b4_smallest_time_cap(gitreins: GitreinsModules, elapsed: float) -> None:
    """B4 with the smallest whole-second cap: ``max_seconds = 1`` is a cap (> 0) like any
    other, reached at 1 s elapsed. A check that treated caps up to 1 as no cap passes
    every cap of 10 above."""
    caps = Caps(max_seconds=1.0)
    model = Budget(caps).start()
    target: Any = gitreins.eval_cap.EvalCap(**caps.model_dump())
    with clock_at(T0):
        target.start()
    with clock_at(T0 + elapsed):
        check_report("B4", target.check(), model.hard_caps(elapsed))
