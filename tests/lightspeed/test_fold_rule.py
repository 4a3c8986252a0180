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
