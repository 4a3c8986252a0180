"""V1 names everything the valve's decision reads: the input meter, the input cap, the
ratio and the compactions so far. The evaluator's other settings do not move it. Here:
the per-call output limit (``evaluator.max_tokens_per_call``, which no property speaks
of), at values a run never meets by default (0, -1 as 'unlimited'), on a fixed program
at V1's edge. Killed: the 0.13.0/0.14.0 mutant that puts ``max_tokens_per_call > 0``
in place of the valve's 'meter > 0' guard (the valve then never fires at those values)."""

from __future__ import annotations

import pytest

from ctxaudit.targets.gitreins.loop import Called, LoopDriver, is_compacted
from ctxaudit.targets.gitreins.tree import GitreinsModules
from model.config import Caps, ValveConfig
from model.valve import Answer, Call, Valve

pytestmark = [pytest.mark.gitreins, pytest.mark.properties("V1")]


@pytest.mark.parametrize("max_tokens_per_call", [0, -1])
def test_v1_valve_ignores_the_per_call_output_limit(
    gitreins: GitreinsModules, max_tokens_per_call: int
) -> None:
    cfg = ValveConfig(caps=Caps(max_input_tokens=1000), ratio=0.75, criteria=2)
    threshold = int(1000 * 0.75)
    for first in (threshold, threshold + 1):
        step = Answer(prompt=first, writes=(None,))
        expected = Valve.start(cfg).answer(step).pending
        assert isinstance(expected, Call)
        driver = LoopDriver(
            gitreins,
            cfg.caps,
            criteria=cfg.criteria,
            evaluator_config={
                "compaction_threshold": cfg.ratio,
                "max_tokens_per_call": max_tokens_per_call,
            },
        )
        try:
            assert isinstance(driver.start(), Called)
            obs = driver.answer(step)
        finally:
            driver.close()
        assert isinstance(obs, Called) and is_compacted(obs.messages) == expected.compacted, (
            f"V1: meter {first} against threshold {threshold} with max_tokens_per_call "
            f"{max_tokens_per_call}: the model {'compacts' if expected.compacted else 'does not'}"
            f", the target {obs!r:.200}"
        )
