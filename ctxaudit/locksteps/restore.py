"""The restore lockstep (S2, S6, C1 for a conversation kept by a session): any harness's
agent with a conversation manager and a session manager, through its adapter
(:mod:`ctxaudit.concerns.restore`), held to the invariants of
:mod:`ctxaudit.invariants.restore` after every turn and every restore.

One machine configures a manager (which one, how much it keeps, what share it folds, how
many first messages it pins, whether it also reduces proactively, which session store) and
runs turns: a prompt, zero to two rounds of one to three parallel tool calls, a text
answer; any model call of a turn may first report an overflowed window, so the harness
reduces the conversation mid-turn (with a tool call's results just added, or with the
prompt alone); a proactive manager may find the window full before any call; in an eighth
of the turns every summary asked for fails (reactively the turn fails, proactively it goes
on); in some turns a model call fails with a provider error, ending the turn without an
answer; in some a tool asks the user before it runs, stopping the agent until the user
answers (a restore may come between, and the rest of the turn, an overflow included,
comes with the answer); in some a guardrail of the model redacts the prompt with the
turn's first answer; in some the user's code writes the agent's state before it calls the
agent; in some the agent's process dies while a tool runs (the storage is kept as the death
left it, and the next agent is built over it: R6). Between turns the agent is restored from its
session (a new agent over the same storage) and the conversation goes on with the restored
one: restores before any reduction, right after one, after several, and reductions after a
restore.

Seed-free programs (:mod:`ctxaudit.locksteps.restore_programs`) meet on every run the cells
of the restore table a search can miss: each manager's reduction followed by a restore,
pinned or not, after a failed summary, after a proactive reduction, then a reduction
after the restore and a restore again, with each store the harness has; and a fold whose
kept messages open on a tool result (R5), after a whole turn or after a provider error.

The model of a restore is the conversation held just before it (R1); what a manager keeps
is judged by invariants that do not trust any algorithm (R2-R4 after every turn, R5 on
every summary). A restore in a registered finding's region (``left_out``) is not made: the
example goes on with the agent it had; a summary that breaks R5 in one is not judged by
R5 (the rest of the turn is).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
    run_state_machine_as_test,
)

from ctxaudit import shapes
from ctxaudit.concerns.restore import (
    ASKS,
    DIES,
    MESSAGE,
    REDACTION,
    REDUCTION,
    SUMMARIZING,
    WRITES,
    FoldStep,
    Held,
    Observed,
    PinStep,
    RegionStep,
    RestoreAdapter,
    RestoreStep,
    Settings,
    Turn,
    opening,
)
from ctxaudit.invariants.restore import (
    check_held,
    check_recent,
    check_restored,
    check_restored_after_death,
    check_restored_state,
    key,
    recent_broken,
)
from ctxaudit.locksteps.folders import end_example, example_folder
from ctxaudit.locksteps.notes import event as _event
from ctxaudit.locksteps.notes import note
from ctxaudit.outcomes import CouldNotCheck

#: the shape coverage this lockstep reports (ctxaudit/shapes.py)
RESTORES = "restore: the manager × what the conversation had been through at a restore"
HISTORY = ("nothing reduced", "reduced", "reduced with pins", "reduced after a restore")
#: what else the agent had been through at a restore, beyond its reductions
ALSO = "restore: the manager × what else the agent had at a restore"
ALSO_HAD = (
    "its state written",
    "messages of its own",
    "a call awaiting the user",
    "a turn a provider error ended",
    "a prompt a guardrail redacted",
    "a death while a tool ran",
    "a prompt retried after a provider error",
)
#: the oldest of the messages a fold must keep (R5): where a cut that keeps tool calls with
#: their results would have to move
RECENT = "restore: a summarizing fold × the oldest message it must keep"
#: (a summary is never among them where the manager keeps R5: at least ``keep`` messages
#: follow it after its fold, and messages are only added after them)
OLDEST_KEPT = ("a prompt, an answer or a summary", "a tool call", "a tool result")


#: the registered finding whose region a restore (or a fold that broke R5) is in, or None
LeftOut = Callable[[RegionStep], str | None]


def never(_step: RegionStep) -> None:
    """No registered finding: every restore is made, every fold judged."""
    return None


def settings_for(adapter: RestoreAdapter) -> st.SearchStrategy[Settings]:
    pins = st.one_of(st.none(), st.integers(1, 5)) if adapter.pins else st.none()
    return st.builds(
        Settings,
        manager=st.sampled_from(adapter.managers),
        keep=st.integers(1, 4),
        share=st.sampled_from((0.1, 0.3, 0.5, 0.8)),
        pin=pins,
        store=st.sampled_from(adapter.stores),
        proactive=st.booleans() if adapter.proactive else st.just(False),
        opening=st.integers(0, 2) if adapter.opens else st.just(0),
    )


def make_machine(adapter: RestoreAdapter, left_out: LeftOut = never) -> type[RuleBasedStateMachine]:
    """The restore lockstep of ``adapter``'s agent (``left_out``: its target's registered
    findings' regions)."""
    table = f"{RESTORES} ({adapter.name})"
    dies = getattr(adapter, "dies", False)  # optional in the adapter protocol
    absent = (
        {}
        if adapter.pins
        else {(m, "reduced with pins"): f"{adapter.name} pins no message" for m in adapter.managers}
    )
    shapes.declare(
        table, ("the manager", tuple(adapter.managers)), ("the conversation had", HISTORY), absent
    )
    also_table = f"{ALSO} ({adapter.name})"
    shapes.declare(
        also_table,
        ("the manager", tuple(adapter.managers)),
        ("the agent had", ALSO_HAD),
        {
            (m, had): why
            for m in adapter.managers
            for had, has, why in (
                (
                    ALSO_HAD[1],
                    adapter.opens,
                    f"{adapter.name} is not built with messages of its own",
                ),
                (ALSO_HAD[2], adapter.asks, f"{adapter.name} has no tool that asks the user"),
                (ALSO_HAD[4], adapter.redacts, f"{adapter.name}'s model redacts no prompt"),
                (ALSO_HAD[5], dies, f"{adapter.name}'s agent is not made to die"),
                (
                    ALSO_HAD[6],
                    getattr(adapter, "retries", False),
                    f"{adapter.name} is not called again with a prompt it was called with",
                ),
            )
            if not has
        },
    )
    recent_table = f"{RECENT} ({adapter.name})"
    if SUMMARIZING in adapter.managers:
        shapes.declare(
            recent_table,
            ("the keep setting", ("1", "2", "3", "4")),
            ("the oldest message it keeps", OLDEST_KEPT),
            {
                ("1", OLDEST_KEPT[1]): "a fold's newest message is the prompt or a tool result "
                "(a model call follows it)"
            },
        )

    class RestoreLockstep(RuleBasedStateMachine):
        @initialize(settings=settings_for(adapter))
        def setup(self, settings: Settings) -> None:
            note(f"{adapter.name}: {adapter.spell(settings)}")
            self.settings = settings
            self.folder = example_folder("restore")
            self.conversation = adapter.conversation(settings, self.folder)
            self.ids = itertools.count()
            #: every message's id the agent added, in order (those it was built with first)
            self.added: list[str] = [key(m) for m in opening(settings.opening)]
            self.summaries: dict[str, tuple[str, ...]] = {}
            #: the messages the manager pins (R2): the first ``pin`` of the conversation,
            #: as they come (strands' docs: "Number of messages at the start of the
            #: conversation to permanently pin"), whenever it first tried to reduce it
            self.pinned: list[str] = []
            #: how many messages the conversation surely held when the manager first may
            #: have tried to reduce it: None before (a registered finding's region, PinStep)
            self.first_try: int | None = None
            self.reduced = False
            self.restored = False
            self.state_written = False  # a tool call that writes the agent's state ran
            self.errored = False  # a provider error ended a turn
            #: the prompt (its id now) of the last call, which a provider error ended: the
            #: user's code may pass the same object again (None: no retry can come)
            self.retry_of: str | None = None
            self.retried = False  # the user's code retried a prompt
            self.retried_redacted = False  # ... and a guardrail redacted it
            self.redacted = False  # a guardrail redacted a prompt the agent holds or held
            self.summary_failed = False
            #: the turn whose call awaits the user's answer, with the reply its scripted
            #: fault ends it at (None: no call awaits)
            self.pending: tuple[Turn, int | None] | None = None
            #: what the agent held, and its state, when its last call ended (what a store
            #: that saves only then restores after a death): at first, the agent as built
            self.end = (tuple(self.conversation.held()), self.conversation.state())
            #: the calls a death left without their results (the harness answers them,
            #: with an error, before the next prompt: strands-agents' Agent appends "a
            #: toolResult message to have valid conversation")
            self.dangling: tuple[str, ...] = ()
            self.died = False  # the agent's process died, and it was restored since

        def teardown(self) -> None:
            end_example(getattr(self, "conversation", None), getattr(self, "folder", None))

        def next_id(self, prefix: str) -> str:
            return f"{prefix}{next(self.ids)}"

        @precondition(lambda self: self.pending is None)
        @rule(
            rounds=st.lists(st.integers(1, 3), max_size=2),
            overflow=st.one_of(st.none(), st.integers(0, 2)),
            full=st.one_of(st.none(), st.integers(0, 3)),
            # rare: a failed summary puts the rest of a message-log example in its
            # finding's region on a release that has it
            summary_fails=st.integers(0, 7).map(lambda n: n == 0),
            # a provider error (in a turn with no overflow) ends the turn without an answer:
            # the next prompt follows a tool result or another prompt
            error=st.one_of(st.none(), st.none(), st.integers(0, 2)),
            # the round whose calls write the agent's state (some turns write none, so a
            # change of the manager's state alone must be saved too)
            writer=st.one_of(st.none(), st.integers(0, 1)),
            # the round whose one call asks the user before it runs: the turn stops there
            # until the user answers (a restore may come between)
            asks=st.one_of(st.none(), st.none(), st.integers(0, 1)) if adapter.asks else st.none(),
            # a guardrail redacts the prompt at the turn's first answer (rare: most prompts
            # pass it)
            redact=st.integers(0, 4).map(lambda n: n == 0) if adapter.redacts else st.just(False),
            # the user's code writes the agent's state before it calls the agent
            user_writes=st.booleans() if getattr(adapter, "user_state", False) else st.just(False),
            # after a provider error, the user's code passes the same prompt object again
            retry=st.booleans() if getattr(adapter, "retries", False) else st.just(False),
            # the round whose one tool is running when the agent's process dies (rare)
            dies=st.one_of(st.none(), st.none(), st.none(), st.integers(0, 1))
            if dies
            else st.none(),
        )
        def turn(
            self,
            rounds: list[int],
            overflow: int | None,
            full: int | None,
            summary_fails: bool,
            error: int | None = None,
            writer: int | None = None,
            asks: int | None = None,
            redact: bool = False,
            dies: int | None = None,
            user_writes: bool = False,
            retry: bool = False,
        ) -> None:
            # a call a death left without its results is answered first, at this prompt
            self.added += [f"r-{c}" for c in self.dangling[:1]]
            self.dangling = ()
            retried, self.retry_of = (self.retry_of if retry else None), None
            prompt = retried or self.next_id("u")
            ask = None if asks is None or not rounds else min(asks, len(rounds) - 1)
            die = (
                None
                if dies is None or not rounds or ask is not None
                else min(dies, len(rounds) - 1)
            )
            redacts_retry = retried is not None and redact
            if die is not None and (
                error is not None or self.left_out_if_reduced(summary_fails, redacts_retry)
            ):
                die = None  # (not drawn with a provider error, nor in a finding's region)
            replies = tuple(
                (self.next_id(ASKS),)
                if i == ask
                else (self.next_id(DIES),)
                if i == die
                else tuple(self.next_id(WRITES if i == writer else "t") for _ in range(n))
                for i, n in enumerate(rounds)
            )
            answer = self.next_id("a")
            at = None if overflow is None else min(overflow, len(replies))
            if die is not None and at is not None and at > die:
                at = None  # the agent dies before that call
            # the model calls the turn makes: a reply each, and the overflowed one
            calls = len(replies) + 1 + (at is not None)
            full_at = None if full is None or not self.settings.proactive else min(full, calls - 1)
            err = None if error is None or at is not None else min(error, len(replies))
            if err is not None and full_at is not None and full_at > err:
                full_at = None  # the turn ends before that call
            if ask is not None:
                full_at = None  # (a proactive reduction is not drawn in a turn that asks)
            if die is not None and full_at is not None and full_at > die + (at is not None):
                full_at = None  # the agent dies before that call
            # a redaction comes with the first answer: none where the first call fails
            redacts = self.next_id("g") if redact and err != 0 else ""
            wrote = self.next_id("v") if user_writes else ""
            turn = Turn(
                prompt,
                (*replies, ()),
                at,
                answer,
                full_at,
                summary_fails,
                err,
                ask,
                redacts,
                die,
                wrote,
                retried is not None,
            )
            note(f"turn({turn!r})")
            before = len(self.added)
            #: what the agent had added before this call (a store that saves only when a
            #: call ends restores it after a death: the retried prompt as it was, too)
            self.kept = list(self.added)
            observed = self.conversation.turn(turn)
            if retried is not None:
                self.retried = True
                _event("a prompt retried after a provider error")
            if redacts and not (at == 0 and observed.raised):  # the first call answered
                if retried is not None:
                    self.redact_retried(retried, redacts, observed)
                    self.retried_redacted = True
                prompt, self.redacted = redacts, True  # the agent holds the prompt redacted
                _event("a guardrail redacted the prompt")
            if summary_fails and (at is not None or full_at is not None):
                self.summary_failed |= self.settings.manager == SUMMARIZING
            stop = err if err is not None else at  # where a scripted fault may end the turn
            if die is not None and not (observed.raised and observed.died is None):
                # (an overflow it could not reduce may end the turn before the death)
                if observed.died is None:
                    raise CouldNotCheck(
                        f"{adapter.name} did not run the tool its process was to die in: the "
                        "lockstep cannot tell what it added"
                    )
                went = [prompt, *self.pairs(replies[:die]), replies[die][0]]
                self.after_death(observed, went, replies[die], before, at, full_at)
                return
            if ask is not None and (err is None or err > ask) and not observed.raised:
                # the agent stops at the call that asks: the prompt, the rounds before it
                # and that call were added; the rest comes with the user's answer
                self.expect_asked(observed, True)
                went = [prompt, *self.pairs(replies[:ask]), replies[ask][0]]
                self.pending = (turn, stop if stop is not None and stop > ask else None)
                _event("a tool asked the user")
            else:
                if observed.raised and ask is not None and stop is not None and stop > ask:
                    raise CouldNotCheck(
                        f"{adapter.name} raised where the turn scripted a tool that asks the "
                        "user first: the lockstep cannot tell what it added"
                    )
                self.expect_asked(observed, False)
                went = [prompt, *self.settle(observed, replies, stop, answer, err is not None)]
                if err is not None and observed.raised:
                    self.retry_of = prompt
            self.after(observed, went, before, at is not None or full_at is not None)

        def redact_retried(self, old: str, new: str, observed: Observed) -> None:
            """A guardrail redacted a retried prompt: the object the agent holds twice (or
            more), so each copy it still held then reads redacted (those a summary had been
            sent before the redaction were not held any more)."""
            folded = sum(ids.count(old) for ids in self.summaries.values())
            for (_, ids), then in zip(observed.summaries, observed.held_at, strict=True):
                if old in {key(m) for m in then}:  # made before the redaction
                    folded += ids.count(old)
            # a fold takes the oldest: the first ``folded`` copies were not held any more
            seen = 0
            for i, k in enumerate(self.added):
                if k == old:
                    seen += 1
                    if seen > folded:
                        self.added[i] = new

        @precondition(lambda self: self.pending is not None)
        @rule()
        def answer(self) -> None:
            """The user approves the call that awaits an answer: the turn goes on."""
            assert self.pending is not None
            turn, stop = self.pending
            ask = turn.asks_at
            assert ask is not None
            self.pending = None
            note("answer()")
            before = len(self.added)
            observed = self.conversation.answer()
            self.expect_asked(observed, False)
            replies = turn.replies[:-1]
            went = [f"r-{replies[ask][0]}"]
            later = None if stop is None else stop - ask - 1
            error = turn.error_at is not None
            rest = self.settle(observed, replies[ask + 1 :], later, turn.answer, error)
            self.after(observed, went + rest, before, turn.overflow_at is not None)

        def expect_asked(self, observed: Observed, asked: bool) -> None:
            if observed.asked != asked:
                raise CouldNotCheck(
                    f"{adapter.name} {'did not stop' if asked else 'stopped'} to ask the user "
                    "where the turn scripted otherwise: the lockstep cannot tell what it added"
                )

        @staticmethod
        def pairs(rounds: tuple[tuple[str, ...], ...]) -> list[str]:
            """What rounds of tool calls add: each call message and its results message."""
            return [k for calls in rounds for k in (calls[0], f"r-{calls[0]}")]

        def settle(
            self,
            observed: Observed,
            replies: tuple[tuple[str, ...], ...],
            stop: int | None,
            answer: str,
            error: bool,
        ) -> list[str]:
            """What a stretch of model calls added (``stop``: the reply, by index, whose call
            a scripted fault ends the turn at): each round, and the answer; a turn that
            raised did so at the failed call, or at the overflowed one whose reduction
            failed: what came before it was added."""
            if observed.raised:
                note(f"  raised {observed.raised}")
                if error:
                    self.errored = True
                    _event("a provider error ended a turn")
                return self.pairs(replies[: stop or 0])
            if error:
                raise CouldNotCheck(
                    f"{adapter.name} went on past a provider error: the lockstep cannot tell "
                    "what the turn added"
                )
            return [*self.pairs(replies), answer]

        def after(self, observed: Observed, went: list[str], before: int, reduces: bool) -> None:
            """The checks after a turn or an answer: R5 on its summaries, R2-R4 on what the
            agent holds."""
            self.summaries.update(observed.summaries)
            for (summary, sent), then in zip(observed.summaries, observed.held_at, strict=True):
                self.check_fold(summary, sent, then)
            held = self.conversation.held()
            note(f"  held: {' '.join(key(m) for m in held)}")
            self.end = (tuple(held), self.conversation.state())
            self.added += went
            self.state_written |= any(k.startswith(f"r-{WRITES}") for k in went)
            if self.first_try is None:
                if reduces:  # at a model call of this turn
                    self.first_try = before + 1
                elif self.settings.manager != SUMMARIZING:  # a window, after every call
                    self.first_try = len(self.added)
            self.pinned = self.added[: self.settings.pin or 0]
            kept = {key(m) for m in held}
            if not self.reduced and any(k not in kept for k in self.added):
                self.reduced = True
                _event("reduced")
            summarizing = self.settings.manager == SUMMARIZING
            broken = check_held(held, self.added, self.pinned, self.summaries, summarizing)
            short = self.added[: self.first_try or 0]
            # R2 broken: in a registered finding's region when only the pins after the
            # first try's are lost, and every invariant holds with the first try's pins
            finding = (
                left_out(PinStep(self.settings, self.first_try))
                if broken
                and self.first_try is not None
                and len(short) < len(self.pinned)
                and not check_held(held, self.added, short, self.summaries, summarizing)
                else None
            )
            if finding is not None:
                note(f"  (R2 in {finding}'s region: only the first try's pins are kept)")
                broken = []
            assert not broken, "S6: " + "\n".join(broken)

        def check_fold(self, summary: str, sent: tuple[str, ...], then: tuple[Held, ...]) -> None:
            """R5 on one summary (``then``: the conversation when it was asked for)."""
            keep = self.settings.keep
            if len(then) > keep:
                oldest = then[-keep]
                kind = next(iter(b.kind for b in oldest.blocks), "text")
                what = {"call": 1, "result": 2}.get(kind, 0)
                shapes.reached(recent_table, str(keep), OLDEST_KEPT[what])
            took = check_recent(sent, then, keep)
            if not took:
                return
            finding = left_out(FoldStep(self.settings, took))
            if finding is not None:
                _event(f"left out: {finding}")
                return
            raise AssertionError("C1: " + recent_broken(summary, took, then, keep))

        @rule()
        def restore(self) -> None:
            if self.pending is not None:
                _event("restored while a call awaits the user")
            step = RestoreStep(
                self.settings, self.reduced, self.summary_failed, self.retried_redacted
            )
            finding = left_out(step)
            if finding is not None:
                _event(f"left out: {finding}")
                return
            had = self.had()
            held, state = self.conversation.held(), self.conversation.state()
            note("restore()")
            self.conversation.restore()
            self.restored, self.retry_of = True, None  # (a new process: no retry of an object)
            got = self.conversation.held()
            broken = check_restored(held, got) + check_restored_state(
                state, self.conversation.state()
            )
            assert not broken, "S2: " + "\n".join(broken)
            self.reach(had)

        def had(self) -> str:
            """What the conversation had been through, as the restore table reads it."""
            return (
                "nothing reduced"
                if not self.reduced
                else "reduced after a restore"
                if self.restored
                else "reduced with pins"
                if self.settings.pin
                else "reduced"
            )

        def reach(self, had: str) -> None:
            """The cells a restore made reaches."""
            shapes.reached(table, self.settings.manager, had)
            for also, were in zip(
                ALSO_HAD,
                (
                    self.state_written,
                    self.settings.opening > 0,
                    self.pending,
                    self.errored,
                    self.redacted,
                    self.died,
                    self.retried,
                ),
                strict=True,
            ):
                if were:
                    shapes.reached(also_table, self.settings.manager, also)
            _event(f"restored: {had}")

        def left_out_if_reduced(self, summary_fails: bool, redacts_retry: bool) -> bool:
            """A restore after this turn, were it to reduce (or redact a retried prompt), is
            in a registered finding's region (the agent is not made to die there: its restore
            cannot be left out)."""
            failed = self.summary_failed or summary_fails
            retried = self.retried_redacted or redacts_retry
            return left_out(RestoreStep(self.settings, True, failed, retried)) is not None

        def after_death(
            self,
            observed: Observed,
            went: list[str],
            calls: tuple[str, ...],
            before: int,
            at: int | None,
            full_at: int | None,
        ) -> None:
            """The agent's process died while the tool of ``calls`` ran (``went``: what the
            turn had added then; ``at``, ``full_at``: its overflowed call and the call before
            which it was full, as scripted): the next agent is built over the storage as the
            death left it and holds what the agent held at its store's last save (R6); the
            lockstep goes on with it, the calls without their results where that save had
            them."""
            assert observed.died is not None
            _event("the agent died while a tool ran")
            had = self.had()
            saves = adapter.saves[self.settings.store]
            reduces = at is not None or full_at is not None
            # the store's last save before the death: what the agent held and its state then,
            # what the turn had added by then, and whether it had reduced the conversation
            if MESSAGE in saves:
                saved, when = observed.died, "when it died"
            else:  # the end of the last call, unless the turn saved later
                redacted = REDACTION in saves and observed.redacted is not None
                reduction = REDUCTION in saves and at is not None
                # the later of the two where both came: the redaction comes with the first
                # answer, after a reduction on the first call's overflow, before any other
                if redacted and not (reduction and at):
                    assert observed.redacted is not None
                    # (no tool ran before it: the state is the first model call's)
                    saved = (observed.redacted, observed.seen[0][1])
                    when = "when a guardrail redacted its prompt"
                    went, reduces = went[:1], at == 0 or full_at == 0
                elif reduction and at is not None:
                    # the call after the overflowed one was sent what was saved before it
                    saved = observed.seen[at + 1]
                    when = "when it had reduced the conversation on an overflow"
                    went = went[: 1 + 2 * at]  # the prompt and the rounds before
                else:
                    saved, when = self.end, "at the end of its last call"
                    went, reduces = [], False
                    self.added = self.kept
                calls = ()
            note("  died; restore()")
            self.conversation.restore()
            self.restored = self.died = True
            self.retry_of = None
            broken = check_restored_after_death(
                saved[0], saved[1], self.conversation.held(), self.conversation.state(), when
            )
            assert not broken, "S2: " + "\n".join(broken)
            self.reach(had)
            self.after(observed, went, before, reduces)
            self.dangling = calls

    return RestoreLockstep


def run_lockstep(adapter: RestoreAdapter, left_out: LeftOut = never, settings: Any = None) -> None:
    """Run the restore lockstep on ``adapter`` as one test (under the current profile, or
    ``settings``)."""
    run_state_machine_as_test(make_machine(adapter, left_out), settings=settings)
