"""Fixed programs, model and target in lockstep: every kind of failed LLM call
(V6), and more context errors than compactions allow (V5). The stateful suite
draws these too; here each one runs on every commit, whatever the profile."""

from __future__ import annotations

import pytest

from ctxaudit.targets.gitreins import GitreinsModules
from ctxaudit.targets.gitreins_loop import (
    Called,
    Finished,
    LoopDriver,
    Observation,
    ended_reason,
    is_compacted,
)
from model.config import Caps, ValveConfig
from model.valve import Answer, Call, Failure, Valve

pytestmark = [pytest.mark.gitreins, pytest.mark.properties("V5", "V6")]

CONFIG = ValveConfig(caps=Caps(max_input_tokens=10**6), ratio=0.9, criteria=2)
FAILURES = {
    "http-400": Failure("context_length_exceeded", status=400),
    "http-413": Failure("Payload Too Large", status=413),
    "http-429": Failure("Too Many Requests", status=429),
    "http-500": Failure("Internal Server Error", status=500),
    "names-context": Failure("prompt is too long: maximum context window"),
    "other-error": Failure("boom"),
    "transport": Failure("connection refused", transport=True),
}


def same(expected: Call | object, obs: Observation) -> bool:
    if isinstance(expected, Call):
        return isinstance(obs, Called) and is_compacted(obs.messages) == expected.compacted
    return isinstance(obs, Finished) and ended_reason(obs.verdict) == expected.reason  # type: ignore[attr-defined]


def lockstep(mods: GitreinsModules, steps: list[Answer | Failure], prop: str) -> None:
    model = Valve.start(CONFIG)
    driver = LoopDriver(mods, CONFIG.caps, criteria=CONFIG.criteria)
    try:
        obs = driver.start()
        for i, step in enumerate(steps):
            if not isinstance(model.pending, Call):
                break
            model = model.fail(step) if isinstance(step, Failure) else model.answer(step)
            obs = driver.fail(step) if isinstance(step, Failure) else driver.answer(step)
            assert same(model.pending, obs), (
                f"{prop}: after step {i} ({step!r}) the model says {model.pending!r}, "
                f"the target {obs!r:.200}"
            )
    finally:
        driver.close()


@pytest.mark.parametrize("kind", FAILURES)
def test_v6_each_failed_call(gitreins: GitreinsModules, kind: str) -> None:
    steps = [Answer(prompt=3, writes=("verified_1",)), FAILURES[kind], Answer(prompt=1)]
    lockstep(gitreins, steps, "V6")


def test_v5_more_context_errors_than_compactions(gitreins: GitreinsModules) -> None:
    lockstep(gitreins, [FAILURES["http-400"]] * 5, "V5")
