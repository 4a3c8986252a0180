"""V6 by HTTP status: only 400 and 413 (and status-less, non-transport errors whose
text names the context) compact; every other status and a transport failure end the
run, whatever their text says (docs/properties.md, V6). Fixed programs, model and
target in lockstep, each failure after one answer and as the first call's failure;
the stateful lockstep (test_valve_lockstep.py) draws the same failures."""

from __future__ import annotations

import pytest

from ctxaudit.targets.gitreins import findings
from ctxaudit.targets.gitreins.loop import (
    Called,
    Finished,
    LoopDriver,
    Observation,
    ended_reason,
    ended_verdict,
    is_compacted,
)
from ctxaudit.targets.gitreins.tree import GitreinsModules
from model.budget import Cap
from model.config import Caps, ValveConfig
from model.valve import CONTEXT_WORDS, Answer, Call, Ended, Failure, Valve

pytestmark = [pytest.mark.gitreins, pytest.mark.properties("V6")]

RATE_LIMIT = (
    "Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): "
    "Limit 30000, Used 29000, Requested 2000. Please try again in 2s."
)
# What providers answer; the text of each names a context keyword unless noted.
STATUS_FAILURES = {
    "400-context": Failure("This model's maximum context length is 8192 tokens", status=400),
    "413": Failure("Request too large: prompt exceeds the maximum length", status=413),
    "401": Failure("Unauthorized", status=401),  # no keyword: the status decides
    "401-token": Failure("Incorrect API key provided: invalid token", status=401),
    "403": Failure("Forbidden: model access exceeded for this project", status=403),
    "404": Failure("The model `gpt-9` does not exist or you do not have access", status=404),
    "429-tpm": Failure(RATE_LIMIT, status=429),
    "500-context": Failure("Internal error while truncating the context", status=500),
    "503-capacity": Failure("The engine is overloaded: maximum capacity exceeded", status=503),
    "transport-context": Failure("read timed out: maximum context window", transport=True),
    "no-status-context": Failure("prompt is too long: 210000 tokens > 200000 maximum"),
}
CONFIG = ValveConfig(caps=Caps(max_input_tokens=10**6), ratio=0.9, criteria=2)


def in_known_region(version: str, failure: Failure) -> str | None:
    for region_of in findings.registered("gitreins", version):
        if region_of.scope == "failure" and region_of.in_region(failure):
            return region_of.id
    return None


def same(expected: Call | Ended, obs: Observation) -> bool:
    if isinstance(expected, Call):
        return isinstance(obs, Called) and is_compacted(obs.messages) == expected.compacted
    return (
        isinstance(obs, Finished)
        and ended_reason(obs.verdict) == expected.reason
        and expected.verdict in (None, ended_verdict(obs.verdict))  # V6: ends INCOMPLETE
    )


@pytest.mark.parametrize("first", [True, False], ids=["first-call", "after-an-answer"])
@pytest.mark.parametrize("kind", STATUS_FAILURES)
def test_v6_status_decides(gitreins: GitreinsModules, kind: str, first: bool) -> None:
    failure = STATUS_FAILURES[kind]
    known = in_known_region(gitreins.tree.version, failure)
    if known:
        pytest.skip(f"in the region of registered finding {known}")
    steps: list[Answer | Failure] = [] if first else [Answer(prompt=3, writes=("verified_1",))]
    steps += [failure, Answer(prompt=1)]
    model = Valve.start(CONFIG)
    driver = LoopDriver(gitreins, CONFIG.caps, criteria=CONFIG.criteria)
    try:
        obs = driver.start()
        for i, step in enumerate(steps):
            if not isinstance(model.pending, Call):
                break
            model = model.fail(step) if isinstance(step, Failure) else model.answer(step)
            obs = driver.fail(step) if isinstance(step, Failure) else driver.answer(step)
            said = "compacts" if isinstance(model.pending, Call) else "ends the run"
            assert same(model.pending, obs), (
                f"V6: after step {i} ({step!r}) the model {said} ({model.pending!r}); "
                f"the target: {obs!r:.200}"
            )
    finally:
        driver.close()


# V6's words one at a time, each alone in a status-less error (the texts above name
# several at once, so a target that forgot one word would still pass them), and a
# status-less text that names none of them.
ONE_WORD = {f"only-{w}": Failure(f"request failed: {w.upper()} problem") for w in CONTEXT_WORDS}
ONE_WORD["no-word"] = Failure("request failed: upstream said no")


@pytest.mark.parametrize("kind", ONE_WORD)
def test_v6_each_context_word_alone(gitreins: GitreinsModules, kind: str) -> None:
    failure = ONE_WORD[kind]
    known = in_known_region(gitreins.tree.version, failure)
    if known:
        pytest.skip(f"in the region of registered finding {known}")
    model = Valve.start(CONFIG).answer(Answer(prompt=3, writes=("verified_1",))).fail(failure)
    driver = LoopDriver(gitreins, CONFIG.caps, criteria=CONFIG.criteria)
    try:
        driver.start()
        driver.answer(Answer(prompt=3, writes=("verified_1",)))
        obs = driver.fail(failure)
        said = "compacts" if isinstance(model.pending, Call) else "ends the run"
        assert same(model.pending, obs), (
            f"V6: a status-less error {failure.text!r}: the model {said}; the target: {obs!r:.200}"
        )
    finally:
        driver.close()


def test_v6_model_reads_the_status_first() -> None:
    """The model itself (no target): the status decides when there is one."""
    compacts = {k for k, f in STATUS_FAILURES.items() if f.names_context()}
    assert compacts == {"400-context", "413", "no-status-context"}
    assert Failure("Bad Request", status=400).names_context()
    assert not Failure("anything", transport=True).names_context()


@pytest.mark.properties("B3")
def test_b3_model_spends_no_compaction_at_the_cap() -> None:
    """The model itself (no target): with the credit at the cap and the valve due,
    the run ends on the iteration cap; no compaction is spent, no call made."""
    cfg = ValveConfig(
        caps=Caps(max_iterations=3.0, tool_call_weight=1.0, max_input_tokens=20), ratio=0.9
    )
    valve = Valve.start(cfg).answer(Answer(prompt=19, writes=(None, None)))
    assert valve.pending == Ended("cap", frozenset({Cap.ITERATIONS}))
    assert valve.compactions == 0 and valve.budget.input == 19
