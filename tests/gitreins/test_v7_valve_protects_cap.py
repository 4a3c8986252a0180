"""V7, on its own: with every call's input below the margin the valve leaves,
the input cap is never reached while compactions remain (GR-GAP-062)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxaudit.targets.gitreins.loop import compactions, replay
from ctxaudit.targets.gitreins.tree import GitreinsModules
from model.config import Caps
from model.valve import Answer

pytestmark = [pytest.mark.gitreins, pytest.mark.properties("V7")]


@st.composite
def budgets_and_calls(draw: st.DrawFn) -> tuple[int, float, list[int]]:
    ratio = draw(st.sampled_from([0.9, 0.5, 0.75]), label="ratio")
    cap = draw(st.integers(10, 2_000_000), label="max_input_tokens")
    margin = cap - int(cap * ratio)
    inputs = draw(st.lists(st.integers(0, margin - 1), min_size=1, max_size=40), label="inputs")
    return cap, ratio, inputs


@given(budgets_and_calls())
def test_v7_valve_protects_cap(
    gitreins: GitreinsModules, case: tuple[int, float, list[int]]
) -> None:
    cap, ratio, inputs = case
    steps = [Answer(prompt=n, writes=(None,)) for n in inputs]
    seen = replay(gitreins, Caps(max_input_tokens=cap), steps=steps, ratio=ratio)
    metered = sum(inputs[: len(seen) - 1])
    reached = "Input token budget" in str(
        getattr(getattr(seen[-1], "verdict", None), "summary", "")
    )
    done = compactions(seen)
    assert not (reached and done < 3), (
        f"V7: the input cap {cap} was reached after {done} compaction(s), every call's input "
        f"< {cap - int(cap * ratio)} (ratio {ratio}; {metered} tokens metered in all).\n"
        f"Reproduce:\n"
        f"    replay(gitreins, Caps(max_input_tokens={cap}), ratio={ratio},\n"
        f"           steps=[Answer(prompt=n, writes=(None,)) for n in {inputs[: len(seen) - 1]!r}])"
    )
