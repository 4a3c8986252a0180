"""The model's fold rule (``model/settlement.py`` ``plan``) under an estimate that is not
monotone, as lightspeed-stack's is: it counts the stored markers, the turns no marker
covers and the new input, so a conversation that holds a marker can be under the
threshold again.

docs/properties.md, section 3: turns are folded "Over threshold_ratio * context_window and over
token_floor". Under it, a conversation that holds a marker is still served with an
explicit input (markers, the turns no marker covers, the new input) and its turn is the
owner's to write, but nothing is folded. Runs in ctxaudit's interpreter, in
milliseconds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from model import settlement as model


def uncovered_estimate(
    instructions: str, turns: Sequence[model.Turn], new: Sequence[model.JSONObject]
) -> int:
    """Like lightspeed-stack's: the markers, the turns no marker covers, the new input."""
    markers = [t.marker for t in turns if t.marker is not None]
    covered = max((int(m["last_turn"]) for m in markers), default=0)
    recent = [c for t in turns[covered:] for c in t.exchange]
    return model.estimate(instructions, [*markers, *recent], new)


def params(window: int) -> model.Params:
    return model.Params(
        context_window=window,
        threshold_ratio=0.5,
        token_floor=0,
        buffer_turns=1,
        instructions="",
        summarize=lambda items: f"summary of {len(items)}",
        estimate=uncovered_estimate,
    )


def turn(text: str, answer: str = "ok") -> model.Turn:
    return model.Turn(
        (
            model.Item("input", model.user_message(text)),
            model.Item("output", model.answer([answer], "completed")[0]),
        )
    )


def with_marker() -> tuple[model.Turn, ...]:
    """Turn 1 folded by turn 3's compaction; turns 2 and 3 not covered (short)."""
    marked = model.Turn((model.Item("summary", model.marker(1, 1, "s")), *turn("q3").items))
    return (turn("q1"), turn("q2"), marked)


def test_under_the_threshold_a_marker_keeps_the_explicit_input_and_folds_nothing() -> None:
    p = params(window=4000)  # the short turns are far under 2000 tokens
    convs = {"c": with_marker()}
    plan = model.plan(convs, model.Request("c", "q4", "query"), p)
    assert not model.compacts(p, plan.estimate)
    assert plan.compacted  # a marker exists: explicit input, the owner writes
    assert plan.new_marker is None, "folded under the threshold"
    items = plan.explicit_input or ()
    assert [i.get("type") for i in items].count("summary") == 1
    assert items[-1] == model.user_message("q4")
    # every turn no marker covers is sent verbatim: turns 2 and 3
    assert model.user_message("q2") in items and model.user_message("q3") in items
    after, outcome = model.settle(convs, plan, model.Completed(("a",)))
    assert outcome.writer == "owner" and outcome.stored is not None
    assert outcome.stored.marker is None


def test_over_the_threshold_the_uncovered_turns_but_the_buffer_are_folded() -> None:
    p = params(window=20)  # 10 tokens: every request is over
    plan = model.plan({"c": with_marker()}, model.Request("c", "q4", "query"), p)
    assert model.compacts(p, plan.estimate) and plan.compacted
    assert plan.new_marker is not None
    assert (plan.new_marker["first_turn"], plan.new_marker["last_turn"]) == (2, 2)


def capped(window: int, buffer: int, ratio: float | None) -> model.Params:
    """Every request over the threshold; each turn counts 10 (one per message, 5 each)."""
    return dataclasses.replace(
        params(window),
        buffer_turns=buffer,
        buffer_max_ratio=ratio,
        count=lambda items: 5 * len(items),
    )


def folded_through(p: model.Params, turns: int) -> int:
    convs = {"c": tuple(turn(f"q{n}") for n in range(1, turns + 1))}
    new_marker = model.plan(convs, model.Request("c", "next", "query"), p).new_marker
    assert new_marker is not None
    return int(new_marker["last_turn"])


def test_the_buffer_cap_keeps_the_newest_turns_that_fit() -> None:
    """lightspeed-stack's degrading guard: of ``buffer_turns`` turns, as many of the
    newest as count at most ``buffer_max_ratio * context_window`` stay verbatim."""
    assert folded_through(capped(20, buffer=3, ratio=None), 5) == 2  # no cap: 3 kept
    assert folded_through(capped(20, buffer=3, ratio=1.0), 5) == 3  # 20 tokens: 2 kept
    assert folded_through(capped(20, buffer=3, ratio=1.5), 5) == 2  # 30: all 3 fit exactly
    assert folded_through(capped(20, buffer=3, ratio=0.49), 5) == 5  # under 10: none kept


def test_under_the_cap_nothing_changes() -> None:
    for buffer in (0, 1, 2):
        assert folded_through(capped(20, buffer, ratio=10.0), 4) == folded_through(
            capped(20, buffer, ratio=None), 4
        )
