"""How a run ends, as fixed programs (no drawn examples: each shape is met on every run,
whatever the seed), model and target in lockstep:

- the run's verdict (section 2 and V6; ``model/valve.py::Ended``): the LLM's when it
  answers without tool calls; INCOMPLETE when a failed call cannot compact, when the
  answer without tool calls has no verdict in it, and when a cap ends the run before
  every criterion was verified;
- V1's default ratio: a ``.gitreins/config.yaml`` with no ``evaluator:`` section at all
  runs with ``compaction_threshold`` 0.90;
- B1 for a response that carries no usage object: it reports no tokens, so it meters 0
  and the run goes on (an interpretation: docs/properties.md, B1).
"""

from __future__ import annotations

from typing import Any

import pytest

from ctxaudit.targets.gitreins.loop import (
    Called,
    Finished,
    LoopDriver,
    ended_reason,
    ended_verdict,
    is_compacted,
)
from ctxaudit.targets.gitreins.tree import GitreinsModules
from model.config import Caps, ValveConfig
from model.valve import Answer, Call, Ended, Failure, Valve

pytestmark = [pytest.mark.gitreins]

BIG = 10**6
CONTEXT = Failure("context_length_exceeded", status=400)
#: name -> (caps, steps); every program ends the run with its last step
ENDS: dict[str, tuple[Caps, list[Answer | Failure]]] = {
    "verdict": (Caps(max_input_tokens=BIG), [Answer(prompt=3, writes=(None,)), Answer()]),
    "verdict-incomplete": (Caps(max_input_tokens=BIG), [Answer(verdict="INCOMPLETE")]),
    "empty-answer": (Caps(max_input_tokens=BIG), [Answer(prompt=3, verdict=None)]),
    "failure": (Caps(max_input_tokens=BIG), [Answer(prompt=3, writes=(None,)), Failure("boom")]),
    "failure-500": (Caps(max_input_tokens=BIG), [Failure("Internal Server Error", status=500)]),
    "context-errors-exhausted": (Caps(max_input_tokens=BIG), [CONTEXT] * 4),
    # a cap reached when the LLM call is recorded (input cap), nothing verified
    "cap-after-call": (Caps(max_input_tokens=50), [Answer(prompt=60, writes=(None,))]),
    # the same with one of two criteria verified before it
    "cap-after-call-partial": (
        Caps(max_input_tokens=50),
        [Answer(prompt=1, writes=("verified_0",)), Answer(prompt=60, writes=(None,))],
    ),
    # the iteration credit reaches the cap during a tool call, nothing verified
    "cap-in-tool-call": (
        Caps(max_iterations=2, tool_call_weight=1.0, max_input_tokens=BIG),
        [Answer(prompt=1, writes=(None, None, None))],
    ),
    # the output cap, checked at the top of the loop after a compaction reset nothing
    "cap-output": (Caps(max_output_tokens=5, max_input_tokens=BIG), [Answer(completion=9)]),
}


def run_program(
    mods: GitreinsModules, cfg: ValveConfig, steps: list[Answer | Failure], **driver: Any
) -> tuple[Valve, list[Any]]:
    """Model and target through ``steps``; asserts they agree after each step (the next
    call's shape, or the end, its reason and its verdict) and returns both."""
    model = Valve.start(cfg)
    d = LoopDriver(mods, cfg.caps, criteria=cfg.criteria, **driver)
    try:
        seen = [d.start()]
        for i, step in enumerate(steps):
            assert isinstance(model.pending, Call) and isinstance(seen[-1], Called)
            if isinstance(step, Failure):
                model, obs = model.fail(step), d.fail(step)
            else:
                model, obs = model.answer(step), d.answer(step)
            seen.append(obs)
            check(model.pending, obs, f"step {i} ({step!r})")
        return model, seen
    finally:
        d.close()


def check(expected: Call | Ended, obs: Any, where: str) -> None:
    if isinstance(expected, Call):
        assert isinstance(obs, Called), f"after {where} the model calls the LLM, got {obs!r:.300}"
        assert is_compacted(obs.messages) == expected.compacted, (
            f"V1: after {where} the model {'compacts' if expected.compacted else 'does not'}"
        )
        return
    assert isinstance(obs, Finished), f"after {where} the model ends the run, got {obs!r:.300}"
    reason, verdict = ended_reason(obs.verdict), ended_verdict(obs.verdict)
    assert reason == expected.reason, f"after {where} the run ended as {reason}, not {expected}"
    assert expected.verdict in (None, verdict), (
        f"section 2/V6: the run ended ({reason}) with the verdict {verdict!r}; the model "
        f"says {expected.verdict!r}"
    )


@pytest.mark.properties("V6", "B2", "B3")
@pytest.mark.parametrize("end", ENDS)
def test_the_runs_verdict(gitreins: GitreinsModules, end: str) -> None:
    caps, steps = ENDS[end]
    model, seen = run_program(gitreins, ValveConfig(caps=caps, criteria=2), steps)
    assert isinstance(model.pending, Ended) and isinstance(seen[-1], Finished)
    if end != "cap-after-call-partial":  # the verdict is said for each other program
        assert model.pending.verdict is not None


@pytest.mark.properties("V1")
@pytest.mark.parametrize("config", [{}, {"defaults": {"tool_call_weight": 0.1}}])
def test_v1_default_ratio_without_an_evaluator_section(
    gitreins: GitreinsModules, config: dict[str, Any]
) -> None:
    """No ``evaluator:`` section: the valve fires at the default ratio 0.90, at its edge
    (the meter at int(1000 * 0.9) does not compact, one token more does)."""
    cfg = ValveConfig(caps=Caps(max_input_tokens=1000), criteria=2)
    for first in (900, 901):
        steps = [Answer(prompt=first, writes=(None,)), Answer(prompt=1)]
        run_program(gitreins, cfg, steps, config=config)


@pytest.mark.properties("B1")
@pytest.mark.parametrize("then", ["tool-call", "verdict"])
def test_b1_response_without_usage(gitreins: GitreinsModules, then: str) -> None:
    """A response with no usage object (``LLMResponse.usage`` None) reports no tokens: it
    meters 0 and the run goes on; the meters read as the model's after it."""
    cfg = ValveConfig(caps=Caps(max_input_tokens=BIG, max_iterations=10), criteria=2)
    first = Answer(prompt=30, completion=4, cache_read=3, cache_write=2, writes=(None,))
    silent = Answer(writes=(None,)) if then == "tool-call" else Answer()
    model = Valve.start(cfg).answer(first)
    d = LoopDriver(gitreins, cfg.caps, criteria=cfg.criteria)
    try:
        d.start()
        check(model.pending, d.answer(first), "the first answer")
        model = model.answer(silent)
        check(model.pending, d.answer(silent, usage=False), "an answer without usage")
        b = model.budget
        want = {"input": b.input, "output": b.output, "cache_read": b.cache_read,
                "cache_write": b.cache_write, "credit": b.credit}  # fmt: skip
        assert d.counters() == want, f"B1: after it EvalCap reads {d.counters()}, not {want}"
        if then == "tool-call":
            model = model.answer(Answer())
            check(model.pending, d.answer(Answer(), usage=False), "a verdict without usage")
    finally:
        d.close()
