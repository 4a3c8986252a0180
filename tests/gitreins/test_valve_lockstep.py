"""V1-V7 (and B1-B3 inside the loop): AgenticEvaluator.evaluate in lockstep
with model.valve, one LLM call per step.

Each rule is what the LLM does with the pending call: answer (usage and tool
calls, among them ``sandbox_write`` of ``verified_<i>``), give its verdict,
fail with a context error, another error or a transport failure. After each
step the next LLM call (or the end of the run) is compared with the model:
whether the conversation was compacted (V1/V3/V5/V6), which criteria the
progress prompt lists (V4), EvalCap's counters (B1/B3) and how the run ended.
Before the comparison, the counters are held to the budget's invariants, which do not
trust the model (``ctxaudit/invariants/budget.py``): at each call the loop makes no
counter has gone back (the token meters start again only at a compaction, BI1) and
no cap is reached (BI3).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis import target
from hypothesis.control import currently_in_test_context
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from ctxaudit import stats
from ctxaudit.invariants.budget import Meters, check_loop, limits_of, report
from ctxaudit.targets.gitreins import findings
from ctxaudit.targets.gitreins.loop import (
    Called,
    Crashed,
    Finished,
    LoopDriver,
    Observation,
    ended_reason,
    ended_verdict,
    is_compacted,
    progress_lists,
)
from ctxaudit.targets.gitreins.tree import GitreinsModules
from model.budget import Cap
from model.config import Caps, ValveConfig
from model.valve import Answer, Call, Ended, Failure, Valve

pytestmark = [
    pytest.mark.gitreins,
    pytest.mark.properties("V1", "V2", "V3", "V4", "V5", "V6", "V7", "B1", "B3"),
]

CRITERIA = 3
LOOP_CALL_AT_CAP = "GR-B3-LOOP-CALL-AT-CAP"


def valve_configs(version: str) -> st.SearchStrategy[ValveConfig]:
    skip = findings.excluded_regions("gitreins", version, "valve-config")
    caps = st.builds(
        Caps,
        max_iterations=st.sampled_from([-1.0, 0.0, 2.5, 4.0, 12.0, 40.0]),  # <= 0: no cap
        max_input_tokens=st.sampled_from([-1, 0, 20, 100, 1000, 5000, 100_000]),  # V2: <= 0
        max_output_tokens=st.sampled_from([-1, 50, 400, 5000]),
        tool_call_weight=st.sampled_from([0.1, 0.5]),
    )
    configs = st.builds(
        ValveConfig,
        caps=caps,
        ratio=st.sampled_from([0.9, 0.5, 0.75, 0.99]),
        criteria=st.just(CRITERIA),
    )
    return configs.filter(lambda cfg: not any(region(cfg) for region in skip))


def answers(cfg: ValveConfig, meter: int) -> st.SearchStrategy[Answer]:
    """Usage aimed at the valve's threshold and the cap, and tool calls."""
    cap = cfg.caps.max_input_tokens
    sizes = st.integers(0, 40)
    if cap > 0:
        threshold = int(cap * cfg.ratio)
        aims = [threshold - meter, threshold - meter + 1, cap - meter, cap - meter - 1]
        sizes = st.one_of(sizes, st.sampled_from([a for a in aims if a >= 0] or [0]))
    keys = st.one_of(
        st.sampled_from([f"verified_{i}" for i in range(CRITERIA)]),
        st.sampled_from(["notes", "verified_x", f"verified_{CRITERIA}", None]),
    )
    return st.builds(
        Answer,
        prompt=sizes,
        completion=st.integers(0, 30),
        cache_read=st.sampled_from([0, 0, 3]),
        cache_write=st.sampled_from([0, 0, 2]),
        writes=st.lists(keys, min_size=1, max_size=3).map(tuple),
    )


# V6: failures that name the context window (compact while compactions remain)...
context_failures = st.one_of(
    st.builds(Failure, text=st.just("context_length_exceeded"), status=st.sampled_from([400, 413])),
    st.builds(Failure, text=st.just("prompt is too long: maximum context window")),
)
# ...and failures that end the run: every other status (401, 403, 404, 429, 5xx), whatever
# its text says, other errors, transport failures (whose text names "exceeded", as
# requests' "Max retries exceeded" does). Those in a registered finding's region are left out.
ENDING_FAILURES = [
    Failure("Too Many Requests", status=429),
    Failure("Internal Server Error", status=500),
    Failure("boom"),
    Failure("connection refused", transport=True),
    Failure("Unauthorized", status=401),
    Failure("Forbidden", status=403),
    Failure("Not Found", status=404),
    Failure("Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000", status=429),
    Failure("maximum capacity exceeded", status=503),
]


def make_machine(mods: GitreinsModules) -> type[RuleBasedStateMachine]:
    version = mods.tree.version
    known = {f.id for f in findings.registered("gitreins", version)}
    skip = findings.excluded_regions("gitreins", version, "failure")
    ending_failures = st.sampled_from(
        [f for f in ENDING_FAILURES if not any(region(f) for region in skip)]
    )

    class ValveLockstep(RuleBasedStateMachine):
        model: Valve
        driver: LoopDriver
        obs: Observation
        compactions_seen: int
        largest_input: int
        steps = 0

        @initialize(cfg=st.deferred(lambda: valve_configs(version)), min_calls=st.integers(0, 12))
        def setup(self, cfg: ValveConfig, min_calls: int) -> None:
            """``min_calls``: the LLM answers at least this many calls before it
            may give its verdict or fail for good (so runs go deep)."""
            self.min_calls = min_calls
            self.model = Valve.start(cfg)
            self.driver = LoopDriver(
                mods,
                cfg.caps,
                criteria=cfg.criteria,
                evaluator_config={"compaction_threshold": cfg.ratio},
            )
            self.compactions_seen = 0
            self.largest_input = 0
            self.shown: Meters | None = None
            self.obs = self.driver.start()
            self.compare(first=True)

        def teardown(self) -> None:
            stats.example_done("ValveLockstep", self.steps)
            # steer the profiles that have a target phase toward deep runs (not in the
            # fixed programs that drive this machine by hand)
            if currently_in_test_context():
                target(float(getattr(self, "compactions_seen", 0)), label="compactions")
            if hasattr(self, "driver"):
                self.driver.close()

        def running(self) -> bool:
            return isinstance(self.model.pending, Call) and isinstance(self.obs, Called)

        @precondition(running)
        @rule(data=st.data())
        def answer(self, data: st.DataObject) -> None:
            self.reply(
                data.draw(answers(self.model.config, self.model.budget.input), label="reply")
            )

        def reply(self, reply: Answer) -> None:
            """The LLM answers the pending call (the rule's body, also used by fixed programs)."""
            self.largest_input = max(
                self.largest_input, reply.prompt + reply.cache_read + reply.cache_write
            )
            sent = self.obs.messages if isinstance(self.obs, Called) else []
            self.model = self.model.answer(reply)
            self.obs = self.driver.answer(reply)
            self.compare()
            if isinstance(self.model.pending, Call) and not self.model.pending.compacted:
                self.conversation_grew(sent, len(reply.writes))

        def conversation_grew(self, sent: list[dict[str, Any]], tool_calls: int) -> None:
            """The loop (docs/properties.md, section 2) without compaction: the next
            call carries the conversation it sent, then the LLM's answer and one result
            per tool call."""
            assert isinstance(self.obs, Called)
            got = self.obs.messages
            roles = [m.get("role") for m in got[len(sent) :]]
            assert got[: len(sent)] == sent and roles == ["assistant"] + ["tool"] * tool_calls, (
                f"V1/V3: without compaction the next call should carry the {len(sent)} messages "
                f"sent before plus the answer and {tool_calls} tool result(s); it carries "
                f"{len(got)} (new roles: {roles})"
            )

        @precondition(running)
        @rule(failure=context_failures)
        def context_error(self, failure: Failure) -> None:
            self.model = self.model.fail(failure)
            self.obs = self.driver.fail(failure)
            self.compare(after_failure=True)

        @precondition(lambda self: self.running() and self.model.config.caps.max_input_tokens > 0)
        @rule(writes=st.lists(st.sampled_from(["notes", "verified_0", None]), min_size=1))
        def over_threshold(self, writes: list[str | None]) -> None:
            """The LLM's answer takes the input meter one token over the valve's threshold,
            so the valve is due at the next call. Runs with three compactions and a fourth
            chance (V5) are then common under any seed, not a lucky draw."""
            cfg = self.model.config
            gap = int(cfg.caps.max_input_tokens * cfg.ratio) + 1 - self.model.budget.input
            self.reply(Answer(prompt=max(gap, 0), completion=1, writes=tuple(writes)))

        @precondition(lambda self: self.running() and self.steps >= self.min_calls)
        @rule(ending=st.one_of(st.integers(0, 40), ending_failures))
        def finish(self, ending: int | Failure) -> None:
            """The LLM gives its verdict (after ``ending`` input tokens), or fails."""
            if isinstance(ending, Failure):
                self.model = self.model.fail(ending)
                self.obs = self.driver.fail(ending)
                self.compare(after_failure=True)
                return
            reply = Answer(prompt=ending, completion=5)
            self.largest_input = max(self.largest_input, ending)
            self.model = self.model.answer(reply)
            self.obs = self.driver.answer(reply)
            self.compare()

        @precondition(lambda self: not self.running())
        @rule()
        def run_stays_ended(self) -> None:
            """Once the run has ended, the LLM is never called again."""
            self.driver.assert_no_more_calls()

        def compare(self, first: bool = False, after_failure: bool = False) -> None:
            """Compare the target's next call (or end) with the model's. Messages
            name the property: V6 after a failed call, V1/V2 after an answer."""
            expected, obs = self.model.pending, self.obs
            self.steps = getattr(self, "steps", 0) + 1
            if isinstance(obs, Crashed):
                raise AssertionError(f"the target loop crashed: {obs.error!r}") from obs.error
            self.hold_to_invariants(obs, first, expected)
            if (
                expected == Ended("cap", frozenset({Cap.ITERATIONS}))
                and isinstance(obs, Called)
                and LOOP_CALL_AT_CAP in known
            ):
                # Registered finding: the loop calls the LLM once more with the
                # credit at the cap. Its exact shape is still checked: the valve
                # runs as it would before any call (it compacts, resetting the
                # meters, exactly when the model's valve is due), that call is
                # refused, nothing is metered, and the run ends.
                due = self.model.fires()
                if is_compacted(obs.messages) != due:
                    raise AssertionError(
                        f"V1: before the extra call at the cap ({LOOP_CALL_AT_CAP}) the "
                        f"target {'did not compact' if due else 'compacted'}; the valve is "
                        f"{'' if due else 'not '}due (input meter {self.model.budget.input})"
                    )
                if due:
                    self.model = replace(
                        self.model,
                        budget=self.model.budget.reset(),
                        compactions=self.model.compactions + 1,
                    )
                    self.compactions_seen += 1
                before = self.driver.counters()
                self.obs = obs = self.driver.answer(Answer(prompt=1, completion=1))
                assert isinstance(obs, Finished) and ended_reason(obs.verdict) == "cap", (
                    f"{LOOP_CALL_AT_CAP}: expected the extra call to be refused, got {obs!r}"
                )
                assert self.driver.counters() == before, (
                    f"{LOOP_CALL_AT_CAP}: the refused call was metered"
                )
            if isinstance(expected, Ended):
                assert isinstance(obs, Finished), (
                    f"{'B3' if expected.caps else 'V6' if after_failure else 'V1'}: "
                    f"the model ends the run ({expected.reason}"
                    f"{', ' + ','.join(sorted(expected.caps)) if expected.caps else ''}), "
                    f"but the target called the LLM again ({len(obs.messages)} messages)"
                )
                got = ended_reason(obs.verdict)
                assert got == expected.reason, (
                    f"run ended as {got!r}, the model says {expected.reason!r}"
                )
                verdict = ended_verdict(obs.verdict)
                assert expected.verdict in (None, verdict), (
                    f"{'V6' if after_failure else 'section 2'}: the run ended ({got}) "
                    f"with {verdict!r}, the model says {expected.verdict!r}"
                )
                return
            assert isinstance(obs, Called), (
                f"{'V5/V6' if after_failure else 'B3'}: the model makes another LLM call, "
                f"but the target ended the run: "
                f"{getattr(obs.verdict, 'summary', obs)!r}"
            )
            compacted = not first and is_compacted(obs.messages)
            if compacted != expected.compacted:
                prop = "V2" if self.model.config.caps.max_input_tokens <= 0 else "V1"
                prop = "V6" if after_failure else prop
                model_does = "compacts" if expected.compacted else "does not compact"
                meter = "reset" if expected.compacted else self.model.budget.input
                raise AssertionError(
                    f"{prop}: the model {model_does} before this call, the target "
                    f"{'did' if compacted else 'did not'} (input meter before: {meter}, "
                    f"compactions: {self.model.compactions})"
                )
            if compacted:
                self.compactions_seen += 1
                verified, todo = progress_lists(obs.messages[1]["content"], self.driver.criteria)
                assert verified == set(expected.verified), (
                    f"V4: progress lists {sorted(verified)} as verified, "
                    f"the model {sorted(expected.verified)}"
                )
                assert todo == set(range(CRITERIA)) - set(expected.verified), (
                    f"V4: still-to-verify {sorted(todo)}"
                )
                assert self.compactions_seen <= 3, "V5: more than 3 compactions"

        def hold_to_invariants(self, obs: Called | Finished, first: bool, expected: Any) -> None:
            """BI1 and BI3 on EvalCap's counters as the loop calls the LLM (or ends),
            outside GR-B3-LOOP-CALL-AT-CAP's region (the model ends the run at the
            iteration cap, the loop calls once more: its shape is checked below)."""
            c = self.driver.counters()
            now = Meters(c["credit"], int(c["input"]), int(c["output"]),
                         int(c["cache_read"]), int(c["cache_write"]))  # fmt: skip
            calling = isinstance(obs, Called)
            region = (
                LOOP_CALL_AT_CAP in known
                and calling
                and expected == Ended("cap", frozenset({Cap.ITERATIONS}))
            )
            compacted = calling and not first and is_compacted(obs.messages)
            broken = check_loop(
                self.shown,
                now,
                limits_of(self.model.config.caps),
                calling=calling and not region,
                compacted=compacted,
            )
            assert not broken, report(broken, "the loop")
            self.shown = now

        @invariant()
        def counters_agree(self) -> None:
            if not hasattr(self, "driver"):
                return
            got = self.driver.counters()
            b = self.model.budget
            want = {"input": b.input, "output": b.output, "cache_read": b.cache_read,
                    "cache_write": b.cache_write, "credit": b.credit}  # fmt: skip
            assert got == want, f"B1/B3/B5: EvalCap counters {got} != model {want}"

        @invariant()
        def valve_protects_cap(self) -> None:
            """V7, checked on the target alone."""
            if not hasattr(self, "driver") or not isinstance(self.obs, Finished):
                return
            cfg = self.model.config
            cap = cfg.caps.max_input_tokens
            margin = cap - int(cap * cfg.ratio)
            meter = self.driver.counters()["input"]
            if cap > 0 and self.largest_input < margin and self.compactions_seen < 3:
                assert meter < cap, (
                    f"V7: input cap {cap} reached (meter {meter}) after {self.compactions_seen} "
                    f"compactions, with every call's input < {margin} (ratio {cfg.ratio})"
                )

    return ValveLockstep


def test_valve_lockstep(gitreins: GitreinsModules) -> None:
    run_state_machine_as_test(make_machine(gitreins))


@pytest.mark.parametrize(("ratio", "due"), [(0.5, True), (0.55, False)])
def test_extra_call_at_the_cap(gitreins: GitreinsModules, ratio: float, due: bool) -> None:
    """The shape the thorough profile found (seed 314115651), as a fixed program through
    the lockstep: tool calls bring the credit to the cap with the input meter at 11, over
    the valve's threshold (ratio 0.5: 10, the valve is due) or at it (ratio 0.55: 11, not
    due). GR-B3-LOOP-CALL-AT-CAP's tolerance must accept exactly the first shape."""
    if LOOP_CALL_AT_CAP not in {
        f.id for f in findings.registered("gitreins", gitreins.tree.version)
    }:
        pytest.skip(f"{LOOP_CALL_AT_CAP} is not registered for this version")
    caps = Caps(max_iterations=4.0, max_seconds=-1.0, max_input_tokens=20,
                max_output_tokens=-1, tool_call_weight=0.5)  # fmt: skip
    machine = make_machine(gitreins)()
    try:
        machine.setup(cfg=ValveConfig(caps=caps, ratio=ratio, criteria=CRITERIA), min_calls=0)
        machine.reply(Answer(prompt=0, writes=("verified_0",)))
        machine.counters_agree()
        machine.reply(Answer(prompt=9, cache_write=2, writes=("verified_0",) * 3))
        machine.counters_agree()
        machine.valve_protects_cap()
        assert isinstance(machine.obs, Finished)
        assert machine.model.compactions == int(due)
    finally:
        machine.teardown()
