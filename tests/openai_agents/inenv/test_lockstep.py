"""S1-S3, S6, S7, S9 and C1 on openai-agents' sessions: the release and the model
(``model/session.py``), driven in lockstep.

One :class:`SessionMachine` keeps one conversation in a real ``SQLiteSession`` (with a
retrieval window, where the release documents ``SessionSettings``), each run through a
new ``OpenAIResponsesCompactionSession`` with the documented default hook or a
threshold hook of our own. Rules: a run whose model answers with text, or calls a tool
and then answers; a compact call that fails during a run; another writer's append
while the compact call is in flight; a manual ``run_compaction``, forced or not,
succeeding or failing. After every step the stored rows, every model request's input,
what each compact request covered and what the run answered or raised are compared
with the model's. The documented contract is the model's parameters
(:func:`contract`), never a branch; a registered finding's region is left out
(``ctxaudit/targets/openai_agents/findings.py``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pytest
from hypothesis import event, note, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from ctxaudit import profiles
from ctxaudit.targets.openai_agents import findings
from ctxaudit.targets.openai_agents.adapter import (
    Rig,
    Text,
    documents_suffix,
    has_session_settings,
    tool_call,
)
from model import session
from model.session import Contract
from tests.openai_agents.inenv.conftest import VERSION

pytestmark = pytest.mark.properties("S1", "S2", "S3", "S6", "S7", "S9", "C1")

WINDOWS = (None, 2, 3, 5, 8) if has_session_settings() else (None,)
THRESHOLDS = (None, 1, 2, 3, 5)  # None: no hook passed, the documented default (10)
#: a compact call fails, or another writer appends during it, one run in four
ONE_IN_FOUR = st.integers(0, 3).map(lambda n: n == 3)  # shrinks to False


def summarize(covered: Sequence[str]) -> list[str]:
    """What the fake compact endpoint answers for ``covered`` (as labels)."""
    return [i for i in covered if session.is_user(i)] + [f"CMP:enc:{len(covered)}"]


def contract(window: int | None, threshold: int | None) -> Contract:
    """The documented contract as the model's parameters: the hook's default "compact
    when >= 10 candidate items exist"; the scope is the model-visible suffix where the
    release documents it ("atomically replace a bounded, model-visible suffix"), else
    the whole history ("Compaction clears and rewrites the session history")."""
    scope = "suffix" if documents_suffix() else "whole"
    return Contract(window, 10 if threshold is None else threshold, scope)


class SessionMachine(RuleBasedStateMachine):
    @initialize(
        window=st.sampled_from(WINDOWS),
        threshold=st.sampled_from(THRESHOLDS),
        store=st.integers(0, 3).map(lambda n: n != 0),
    )
    def setup(self, window: int | None, threshold: int | None, store: bool) -> None:
        """``store=False`` (the model settings' ``store``): the responses are not kept
        by the server, so the compaction must send its input ("'auto': Use input when
        the last response was not stored")."""
        self.rig = Rig(window, threshold, store)
        self.contract = contract(window, threshold)
        note(f"openai-agents {VERSION}: {self.contract}, store={store}")
        self.model: tuple[str, ...] = ()
        self.ids = itertools.count()

    def teardown(self) -> None:
        if hasattr(self, "rig"):
            self.rig.close()

    def step(
        self, history: Sequence[str], manual: bool, force: bool, fails: bool, late: bool
    ) -> findings.Step:
        """The step as a region reads it; ``history``: what the compaction reads from
        (the stored history after the turn)."""
        c = self.contract
        covered = history if manual else session.snapshot(c, self.model, history[len(self.model) :])
        fires = session.fires(c, covered, force)
        windowed = session.fires(c, session.visible(c, history), force)
        return findings.Step(
            manual=manual,
            hidden=c.window is not None and len(history) > c.window,
            fires=fires,
            fires_on_window=windowed,
            scope=c.scope,
            compact_fails=fails,
            late=late,
        )

    def adopt(self, finding: findings.Finding) -> None:
        """In a known finding's region the model takes the release's history as it is."""
        event(f"left out: {finding.id}")
        self.model = tuple(self.rig.stored())

    def compare(self, want: Sequence[str], calls: int = 0, compacts: bool = False) -> None:
        got = self.rig.stored()
        assert got == list(want), (
            f"the stored history differs from the model's:\n{got}\n!=\n{list(want)}\n"
            f"({calls} compact call(s); the model makes {int(compacts)})"
        )

    @rule(tool=st.booleans(), compact_fails=ONE_IN_FOUR, late=ONE_IN_FOUR)
    def run(self, tool: bool, compact_fails: bool, late: bool) -> None:
        n = next(self.ids)
        c, before = self.contract, self.model
        call = f'fc:echo{{"tag": "{n}"}}'
        turn = [f"u:u{n}", *([call, f"out:r{n}"] if tool else []), f"a:a{n}"]
        replies = [tool_call(str(n)), Text(f"a{n}")] if tool else [Text(f"a{n}")]
        late_items = [{"role": "user", "content": f"late{n}"}] if late else None
        step = self.step([*before, *turn], False, False, compact_fails, late)
        got = self.rig.run(f"u{n}", replies, compact_fails, late_items)
        finding = findings.left_out(VERSION, step)
        if finding is not None and finding.leaves_out == "step":
            return self.adopt(finding)
        seen = session.visible(c, before)
        sent = [[*seen, turn[0]]] + ([[*seen, *turn[:3]]] if tool else [])
        assert got.model_inputs == sent, (
            f"the model was not sent the window and the turn so far:\n{got.model_inputs}\n"
            f"!=\n{sent}" + (f"\n(the run raised {got.raised!r})" if got.raised else "")
        )
        want = session.run(c, before, turn, summarize, compact_fails, [f"u:late{n}"] * late)
        if late:  # the other writer writes only while a compact call is held
            assert self.rig.late_written == step.fires, (
                f"{'a' if self.rig.late_written else 'no'} compact call came where the model "
                f"makes {'none' if self.rig.late_written else 'one'} (threshold {c.threshold})"
            )
        self.compare(want.stored, len(got.compacts), want.compacted is not None)
        self.check_compacts(got.compacts, want.compacted)
        self.model = want.stored
        if finding is not None:  # leaves out the answer only
            event(f"left out: {finding.id}")
            return
        assert got.raised is None and got.answer == f"a{n}", (
            f"the run did not answer its model's answer 'a{n}': returned {got.answer!r}, "
            f"raised {got.raised!r}" + (" (its compact call failed)" if compact_fails else "")
        )

    def check_compacts(self, bodies: list[dict], covered: Sequence[str] | None) -> None:
        if covered is None:
            assert not bodies, (
                f"compacted where the hook does not approve ({self.contract.threshold} "
                f"candidates needed): sent {[self.rig.compacted(b) for b in bodies]}"
            )
            return
        event("compacted")
        assert len(bodies) == 1, f"{len(bodies)} compact calls where the model makes one"
        sent = self.rig.compacted(bodies[0])
        assert sent is not None, (
            f"the compact call named a response the server never stored: {bodies[0]}"
        )
        assert sent == list(covered), (
            f"the compact call was not sent exactly what it replaces:\n{sent}\n!=\n{list(covered)}"
        )

    @rule(force=st.booleans(), compact_fails=ONE_IN_FOUR)
    def manual(self, force: bool, compact_fails: bool) -> None:
        c, before = self.contract, self.model
        step = self.step(before, True, force, compact_fails, False)
        got = self.rig.compact(force, compact_fails)
        finding = findings.left_out(VERSION, step)
        if finding is not None:
            return self.adopt(finding)
        want = session.manual(c, before, summarize, force, compact_fails)
        assert not got.model_inputs, "a manual compaction called the model"
        self.compare(want.stored, len(got.compacts), want.compacted is not None)
        self.check_compacts(got.compacts, want.compacted)
        self.model = want.stored
        assert (got.raised is None) == want.answered, (
            f"run_compaction raised {got.raised!r}"
            if got.raised is not None
            else "run_compaction returned after its compact call failed"
        )


TestSessions = SessionMachine.TestCase
# Each step is a run through the SDK and HTTP requests to the fake server: the search is
# sized for a service-backed suite, per profile, in ctxaudit/profiles.py (SERVICE_SEARCH).
TestSessions.settings = settings(
    TestSessions.settings, report_multiple_bugs=False, **profiles.service_search()
)
