"""B2-B4 at the edges the stateful suite draws rarely: a cap of 0 or -1 is no
cap (a cap applies only when > 0), and the boundary itself (>=). Fixed
programs, EvalCap against model.budget, on every commit."""

from __future__ import annotations

from typing import Any

import pytest

from ctxaudit.concerns.budget import T0
from ctxaudit.locksteps import budget as concern
from ctxaudit.targets.gitreins.budget import clock_at, reported
from ctxaudit.targets.gitreins.tree import GitreinsModules
from model.budget import Budget, Cap
from model.config import Caps

pytestmark = [pytest.mark.gitreins, pytest.mark.properties("B2", "B3", "B4")]


def check_report(prop: str, message: str | None, expected: frozenset[Cap]) -> None:
    """The cap EvalCap's message names is one the model reports (or none)."""
    concern.check_report(prop, reported(message), expected)


FIELDS = ["max_iterations", "max_seconds", "max_input_tokens", "max_output_tokens"]


def run(mods: GitreinsModules, caps: Caps, elapsed: float, calls: int, tokens: int) -> None:
    model = Budget(caps).start()
    target: Any = mods.eval_cap.EvalCap(**caps.spec())
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
    target: Any = gitreins.eval_cap.EvalCap(**caps.spec())
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
    target: Any = gitreins.eval_cap.EvalCap(**caps.spec())
    with clock_at(T0):
        target.start()
    with clock_at(T0 + elapsed):
        check_report("B4", target.check(), model.hard_caps(elapsed))


#: (tool_call_weight, where one LLM call and one tool call leave the credit against a cap
#: of 2): 1.5 below it, exactly 2 at it, 2.5 past it (each sum exact in binary)
CREDIT_AGAINST_CAP = {"below": 0.5, "at": 1.0, "past": 1.5}


def probe_at_credit(mods: GitreinsModules, where: str, probe: str) -> None:
    """One LLM call and one tool call bring the credit below, exactly to or past a cap of
    2; then ``probe`` (a tool call or an LLM call) is made twice. Model and EvalCap agree on
    every refusal and on the credit after each call."""
    caps = Caps(max_iterations=2.0, tool_call_weight=CREDIT_AGAINST_CAP[where])
    model = Budget(caps)
    target: Any = mods.eval_cap.EvalCap(**caps.spec())

    def llm() -> None:
        nonlocal model
        model, expected = model.llm_call(
            prompt=1, completion=1, cache_read=0, cache_write=0, elapsed=0.0
        )
        check_report("B3", target.record_llm_call(1, 1), expected)

    def tool() -> None:
        nonlocal model
        model, expected = model.tool_call(elapsed=0.0)
        check_report("B3", target.record_tool_call(), expected)

    llm()
    tool()
    assert (target.iteration_credit, model.credit) == (1 + caps.tool_call_weight,) * 2
    assert model.iterations_exhausted() is (where != "below")
    for _ in range(2):
        (tool if probe == "tool" else llm)()
        assert target.iteration_credit == model.credit, (
            f"B3: after a {probe} call at a credit {where} the cap EvalCap's credit is "
            f"{target.iteration_credit}, the model's {model.credit} (a refused call records "
            "nothing)"
        )


@pytest.mark.properties("B3")
@pytest.mark.parametrize("where", CREDIT_AGAINST_CAP)
def test_b3_tool_call_at_exactly_the_cap_is_refused(gitreins: GitreinsModules, where: str) -> None:
    """B3's boundary for a tool call, seed-free: with the credit exactly at
    ``max_iterations`` the tool call is refused (>=), one below it is made, past it is
    refused. The stateful lockstep meets a credit of exactly the cap only when it draws
    that program. Killed: record_tool_call's ``>=`` turned ``>`` (broken_copies.py
    b3-tool-call-at-cap-allowed), which the ``ci`` profile's lockstep examples miss."""
    probe_at_credit(gitreins, where, "tool")


@pytest.mark.properties("B3")
@pytest.mark.parametrize("where", CREDIT_AGAINST_CAP)
def test_b3_llm_call_at_exactly_the_cap_is_refused(gitreins: GitreinsModules, where: str) -> None:
    """B3's boundary for an LLM call, as for a tool call above: refused with the credit at
    the cap or past it, made one below it. Killed: record_llm_call's ``>=`` turned ``>``
    (broken_copies.py b3-llm-call-at-cap-allowed)."""
    probe_at_credit(gitreins, where, "llm")


@pytest.mark.properties("B3")
@pytest.mark.parametrize("probe", ["tool", "llm"])
def test_b3_smallest_iteration_cap(gitreins: GitreinsModules, probe: str) -> None:
    """B3 with the smallest whole cap: ``max_iterations = 1`` is a cap (> 0) like any
    other, so after one LLM call (credit 1) the next call is refused. A check that treated
    caps up to 1 as no cap passes every cap of 2 above. Killed: record_tool_call's
    ``max_iterations > 0`` turned ``> 1`` (broken_copies.py b3-iteration-cap-of-1-ignored)."""
    caps = Caps(max_iterations=1.0, tool_call_weight=0.5)
    model = Budget(caps)
    target: Any = gitreins.eval_cap.EvalCap(**caps.spec())
    model, expected = model.llm_call(prompt=1, completion=1, cache_read=0, cache_write=0, elapsed=0)
    check_report("B3", target.record_llm_call(1, 1), expected)
    if probe == "tool":
        model, expected = model.tool_call(elapsed=0.0)
        check_report("B3", target.record_tool_call(), expected)
    else:
        model, expected = model.llm_call(
            prompt=1, completion=1, cache_read=0, cache_write=0, elapsed=0.0
        )
        check_report("B3", target.record_llm_call(1, 1), expected)
    assert expected == {Cap.ITERATIONS} and target.iteration_credit == model.credit == 1.0
