"""S1-S3, S6, S7, S9 and C1 on openai-agents' sessions: the release and the model
(``model/session.py``), driven in lockstep.

One :class:`SessionMachine` keeps one conversation in a real ``SQLiteSession`` (with a
retrieval window, where the release documents ``SessionSettings``), each run through a
new ``OpenAIResponsesCompactionSession``, or all through one kept for the conversation,
with the documented default hook or a threshold hook of our own. Rules: a run whose
model answers with text, or calls a tool and then answers; a compact call that fails
during a run; another writer's append while the compact call is in flight; a manual
``run_compaction``, forced or not, succeeding or failing. After every step the stored
rows, every model request's input, what each compact request covered (and whether it
named the last response or sent its input) and what the run answered or raised are
compared with the model's. The documented contract is the model's parameters
(:func:`contract`), never a branch; a registered finding's region is left out
(``ctxaudit/targets/openai_agents/findings.py``).

Below the machine: fixed programs (its own steps in a fixed order, seed-free) at the
documented boundaries, a plain store, and a replacement write that fails (S7).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence

import pytest
from agents import SQLiteSession
from agents.memory import OpenAIResponsesCompactionSession
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

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
from tests.outside_hypothesis import event as _event
from tests.outside_hypothesis import note as _note

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


class OneSessionRig(Rig):
    """One ``OpenAIResponsesCompactionSession`` for the whole conversation, as the
    sessions docs' example keeps one, rather than one per request: what the compaction
    session remembers between calls (its candidate cache, the last response id and
    whether it was stored) is then read by the next call."""

    def wrapper(self) -> OpenAIResponsesCompactionSession:
        if not hasattr(self, "one"):
            self.one = super().wrapper()
        return self.one


class SessionMachine(RuleBasedStateMachine):
    @initialize(
        window=st.sampled_from(WINDOWS),
        threshold=st.sampled_from(THRESHOLDS),
        store=st.integers(0, 3).map(lambda n: n != 0),
        one_session=st.booleans(),
    )
    def setup(
        self, window: int | None, threshold: int | None, store: bool, one_session: bool
    ) -> None:
        """``store=False`` (the model settings' ``store``): the responses are not kept
        by the server, so the compaction must send its input ("'auto': Use input when
        the last response was not stored"). ``one_session``: every run (and, with
        unstored responses, every manual compaction) goes through one compaction
        session (:class:`OneSessionRig`)."""
        self.rig = (OneSessionRig if one_session else Rig)(window, threshold, store)
        self.store, self.one_session = store, one_session
        self.contract = contract(window, threshold)
        _note(f"openai-agents {VERSION}: {self.contract}, store={store}, one_session={one_session}")
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
        _event(f"left out: {finding.id}")
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
        # no other writer beside one kept compaction session: its candidate cache does
        # not see a write to the store, and 0.7.0 then deletes that write at the next
        # compaction (the cause of OA-APPEND-DURING-COMPACTION-LOST, a turn later)
        late = late and not self.one_session
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
        # with no retrieval window the last response's chain (what the turn's last model
        # call was sent, and its answer) is the whole history, and 'auto' names that
        # response when it was stored, else sends the input. With a window the
        # compaction may send the input either way ("by input or by a
        # previous_response_id whose chain holds exactly them"; the fixed 0.22.3 sends it)
        by_response = self.store if c.window is None else None
        self.check_compacts(got.compacts, want.compacted, by_response=by_response)
        self.model = want.stored
        if finding is not None:  # leaves out the answer only
            _event(f"left out: {finding.id}")
            return
        assert got.raised is None and got.answer == f"a{n}", (
            f"the run did not answer its model's answer 'a{n}': returned {got.answer!r}, "
            f"raised {got.raised!r}" + (" (its compact call failed)" if compact_fails else "")
        )

    def check_compacts(
        self, bodies: list[dict], covered: Sequence[str] | None, by_response: bool | None = False
    ) -> None:
        """``by_response``: the compact call must name the last response
        (``previous_response_id``), else send its ``input`` (the documented 'auto' mode);
        None: either, so long as it covers exactly ``covered``."""
        if covered is None:
            assert not bodies, (
                f"compacted where the hook does not approve ({self.contract.threshold} "
                f"candidates needed): sent {[self.rig.compacted(b) for b in bodies]}"
            )
            return
        _event("compacted")
        assert len(bodies) == 1, f"{len(bodies)} compact calls where the model makes one"
        sent = self.rig.compacted(bodies[0])
        assert sent is not None, (
            f"the compact call named a response the server never stored: {bodies[0]}"
        )
        assert sent == list(covered), (
            f"the compact call was not sent exactly what it replaces:\n{sent}\n!=\n{list(covered)}"
        )
        named = bool(bodies[0].get("previous_response_id"))
        assert by_response is None or named == by_response, (
            f"the compact call {'named the last response' if named else 'sent its input'} "
            f"where 'auto' {'names it' if by_response else 'sends the input'}"
        )

    # Through one kept compaction session only when the responses are not stored: after
    # a stored run there, run_compaction() names the last response, whose chain is not
    # the stored history once a compaction replaced it (seen on 0.24.0; not a
    # registered finding)
    @precondition(lambda self: not (self.one_session and self.store))
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


# Fixed programs: the machine's own steps and checks, in a fixed order, seed-free.


def program(
    window: int | None, threshold: int | None, store: bool = True, one_session: bool = False
) -> SessionMachine:
    machine = SessionMachine()
    machine.setup(window=window, threshold=threshold, store=store, one_session=one_session)
    return machine


def text_runs(machine: SessionMachine, n: int) -> None:
    for _ in range(n):
        machine.run(tool=False, compact_fails=False, late=False)


def test_the_default_hook_compacts_at_ten_candidates() -> None:
    """The documented default, "compact when >= 10 candidate items exist": three turns
    with a tool call (three candidates each) leave nine, and nothing is compacted; a
    fourth turn's answer makes ten, and the whole history is compacted."""
    m = program(window=None, threshold=None)
    try:
        for _ in range(3):
            m.run(tool=True, compact_fails=False, late=False)
        assert len(session.candidates(m.model)) == 9
        assert not any(i.startswith("CMP:") for i in m.model)
        text_runs(m, 1)
        assert m.model == ("u:u0", "u:u1", "u:u2", "u:u3", "CMP:enc:14")
    finally:
        m.teardown()


def test_a_partial_suffix_starts_at_a_user_message() -> None:
    """0.23.1 on: a 3-item window over a 4-item history hides only its first item, so
    the latest exchange and one item more is the whole history, yet only a suffix was
    model-visible: the compaction covers it from its first user message, by input
    ("Partial suffixes start at a user message"; "Partial snapshots use input mode")."""
    if not documents_suffix():
        pytest.skip("the whole history is compacted before 0.23.1")
    m = program(window=3, threshold=3)
    try:
        text_runs(m, 2)
        assert m.model == ("u:u0", "a:a0", "u:u1", "a:a1")
        m.run(tool=True, compact_fails=False, late=False)
        assert m.model == ("u:u0", "a:a0", "u:u1", "u:u2", "CMP:enc:6")
    finally:
        m.teardown()


def test_a_suffix_under_the_threshold_is_not_compacted_though_the_window_reaches_it() -> None:
    """0.23.1 on, unstored responses, a 3-item window, threshold 2: a turn with a tool
    call whose compact call fails is kept as it is; the next turn sees only the tool
    call, its output and answer before it, so its suffix is that turn alone (one
    candidate) and nothing is compacted, though the window's last three items (the
    previous answer and this turn) hold two."""
    if not documents_suffix():
        pytest.skip("the whole history is compacted before 0.23.1")
    m = program(window=3, threshold=2, store=False)
    try:
        m.run(tool=True, compact_fails=True, late=False)
        assert m.model == ("u:u0", 'fc:echo{"tag": "0"}', "out:r0", "a:a0")
        text_runs(m, 1)
        assert m.model == ("u:u0", 'fc:echo{"tag": "0"}', "out:r0", "a:a0", "u:u1", "a:a1")
    finally:
        m.teardown()


def test_a_manual_compaction_settles_a_deferred_one() -> None:
    """One kept compaction session, unstored responses, threshold 2: a turn with a tool
    call defers its compaction to its answer, and that compact call fails; a forced
    run_compaction() then compacts the history, and the next turn (one candidate) is
    not compacted: nothing is owed any more."""
    m = program(window=None, threshold=2, store=False, one_session=True)
    try:
        m.run(tool=True, compact_fails=True, late=False)
        m.manual(force=True, compact_fails=False)
        assert m.model == ("u:u0", "CMP:enc:4")
        text_runs(m, 1)
        assert m.model == ("u:u0", "CMP:enc:4", "u:u1", "a:a1")
    finally:
        m.teardown()


def test_one_session_compacts_by_the_last_stored_response_and_forgets_its_cache() -> None:
    """One kept compaction session, stored responses, no window: the second turn
    compacts the whole history by the last response's id; the third turn's hook counts
    only the candidates stored after that compaction (one), so nothing is compacted."""
    m = program(window=None, threshold=2, one_session=True)
    try:
        text_runs(m, 2)
        assert m.model == ("u:u0", "u:u1", "CMP:enc:4")
        text_runs(m, 1)
        assert m.model == ("u:u0", "u:u1", "CMP:enc:4", "u:u2", "a:a2")
    finally:
        m.teardown()


def test_one_session_manual_compaction_after_an_unstored_response() -> None:
    """One kept compaction session, unstored responses: a forced run_compaction() after
    two runs sends their whole history as input (the last response was not stored), the
    next turn's hook counts only what was stored after it (one candidate, under the
    threshold of three), and a second forced one sends the history as it is then."""
    m = program(window=None, threshold=3, store=False, one_session=True)
    try:
        text_runs(m, 2)
        m.manual(force=True, compact_fails=False)
        assert m.model == ("u:u0", "u:u1", "CMP:enc:4")
        text_runs(m, 1)
        assert m.model == ("u:u0", "u:u1", "CMP:enc:4", "u:u2", "a:a2")
        m.manual(force=True, compact_fails=False)
        assert m.model == ("u:u0", "u:u1", "u:u2", "CMP:enc:5")
    finally:
        m.teardown()


class PlainRig(Rig):
    """The runs go to the ``SQLiteSession`` itself, with no compaction session."""

    def wrapper(self) -> OpenAIResponsesCompactionSession:
        return self.store  # type: ignore[return-value]  # what Runner.run takes as well


@pytest.mark.properties("S1", "S2", "S3")
def test_a_plain_store_keeps_each_turn_once_in_order() -> None:
    """S1-S3 without compaction: the runner writes each turn to a plain store, its input
    first, then each model step's items."""
    rig = PlainRig(None, None)
    try:
        assert rig.run("u0", [tool_call("0"), Text("a0")]).answer == "a0"
        assert rig.run("u1", [Text("a1")]).answer == "a1"
        call = 'fc:echo{"tag": "0"}'
        assert rig.stored() == ["u:u0", call, "out:r0", "a:a0", "u:u1", "a:a1"]
    finally:
        rig.close()


class UnacknowledgedStore(SQLiteSession):
    """A store whose write of a compaction item commits but then raises ``error`` (an
    acknowledgement lost, or the writing task cancelled): what the SDK's rollback is
    for ("The backend may have committed before acknowledgement failed")."""

    error: type[BaseException] = OSError

    async def add_items(self, items: list) -> None:
        await super().add_items(items)
        if any(isinstance(i, dict) and i.get("type") == "compaction" for i in items):
            raise self.error("the store did not acknowledge the write")


@pytest.mark.properties("S7")
@pytest.mark.parametrize("error", [OSError, asyncio.CancelledError], ids=["raised", "cancelled"])
def test_a_failed_replacement_write_leaves_the_history_unchanged(
    error: type[BaseException],
) -> None:
    """S7: a forced run_compaction() whose replacement write fails raises that failure
    and leaves the stored history as it was (0.7.0: OA-CLEAR-ADD-EMPTIES-SESSION)."""
    if "OA-CLEAR-ADD-EMPTIES-SESSION" in {f.id for f in findings.registered(VERSION)}:
        pytest.skip(f"OA-CLEAR-ADD-EMPTIES-SESSION is registered for openai-agents {VERSION}")
    rig = Rig(None, None)
    rig.store.close()
    rig.store = UnacknowledgedStore(rig.session_id)
    rig.store.error = error
    try:
        rig.run("u0", [Text("a0")])
        assert rig.stored() == ["u:u0", "a:a0"]
        with pytest.raises(error):
            rig.loop.run_until_complete(rig.wrapper().run_compaction({"force": True}))
        assert rig.stored() == ["u:u0", "a:a0"], "a failed replacement write changed the history"
    finally:
        rig.close()
