"""The fold lockstep (C1, S6, S7): any harness's summarization, through its adapter
(:mod:`ctxaudit.concerns.fold`), beside ``model/fold.py``.

One machine runs an agent's conversation under a drawn configuration (a trigger in each
form the harness takes, of each kind of threshold it takes; a kept tail of each kind;
where it takes one, a summarizer function instead of the model): users speak, the model
answers with text or with parallel tool calls (with or without a provider report of its
tokens) whose results come back at once, or later: after other messages, out of order,
interleaved with another model message's results, or not before a fold (still pending);
a tool result arrives whose call is not in the conversation, a run opens with any role,
a model call fails, the summarizer fails. Before each model call both sides decide
whether to fold, and after it the conversations are compared message by message: what
was kept, that one summary replaced everything before the kept tail and the summarizer
was sent exactly that (C1, S6), and that a failed summary fails the step and changes
nothing (S7). Beside the model, every step is first held to the fold's invariants
(F1-F4, :mod:`ctxaudit.invariants.fold`), which do not trust the model: order kept, the
summarizer sent exactly what was removed, no kept result without its call, no kept call
without its result. The adapter's :class:`~ctxaudit.concerns.fold.Contract` is the
model's parameters, never a branch.

Counts rarely land on a threshold by chance, so a user message can be sized to bring the
conversation's count one below, at or one above a token or fraction threshold of the
trigger, and a provider report can be drawn the same way. The seed-free programs of the
concern (:mod:`ctxaudit.locksteps.fold_programs`) run the same machine without
Hypothesis.

A step that enters a registered finding's region (``left_out``: the target's findings
read the model's :class:`~ctxaudit.concerns.fold.Step`) is not compared: the model takes
the harness's conversation and the search goes on.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test

from ctxaudit import shapes
from ctxaudit.concerns.fold import (
    ANY,
    FORMS,
    FRACTION,
    KINDS,
    MESSAGES,
    ONE,
    SUMMARY_DOWN,
    FoldAdapter,
    Settings,
    Shown,
    Step,
)
from ctxaudit.concerns.fold import Message as Added
from ctxaudit.invariants.fold import Entry, check_fold
from ctxaudit.locksteps.fold_shapes import FEATURES, PICKS, features, text
from ctxaudit.locksteps.notes import event, note
from model.fold import Keep, Message, Trigger, fold, unit_start
from model.settlement import tokens

#: the registered finding whose region a step is in, or None
LeftOut = Callable[[Step], str | None]

WINDOWS = (None, 240, 400)
#: a summary call fails now and then (one step in four)
FAILS = st.integers(0, 3).map(lambda n: n == 0)
FRACTIONS = (0.05, 0.1, 0.25, 0.3, 0.5, 0.75, 0.9, 1.0)
#: where a sized message or a report lands: one below, at or one above a threshold
OFFSETS = st.sampled_from((-1, 0, 1))
#: a provider report: none, any count, or (which threshold, offset) aimed at one
REPORTS = st.none() | st.integers(1, 600) | st.tuples(st.integers(0, 5), OFFSETS)
#: whether a report is another provider's (an agent whose model is not the one whose
#: window the thresholds measure)
BY_OTHER = st.sampled_from((False, False, False, True))
#: how many of a model message's calls are left waiting, to be answered later
LATE = st.sampled_from((0, 0, 0, 1, 2, 3))
#: how a run opens: the user, or what is left of an edited or restored history
#: what a run opens with: the user, or what is left of an edited history (a model
#: message, one whose call is still unanswered, a result whose call is gone)
OPENINGS = st.sampled_from(("human", "human", "ai", "call", "tool"))

#: the shape coverage this lockstep reports (ctxaudit/shapes.py), counted over the steps
#: outside the known findings' regions
HOLDS = "fold: what the conversation holds × what the step did"
SETTINGS = "fold: the trigger × the kept tail, on steps that folded"


def count(messages: Sequence[Message]) -> int:
    """The model's token count of a conversation (what the harness's counter is handed)."""
    return sum(tokens(m.text) for m in messages)


def model_trigger(settings: Settings, adapter: FoldAdapter) -> Trigger:
    clauses = tuple(dict(clause) for clause in settings.trigger)
    contract = adapter.contract
    return Trigger(clauses, inclusive=contract.inclusive, reports=contract.reports)


def model_keep(settings: Settings) -> Keep:
    kind, value = settings.keep
    if kind == FRACTION:
        assert settings.window is not None
        return Keep("tokens", max(1, math.floor(settings.window * value)))
    return Keep("messages" if kind == MESSAGES else "tokens", int(value))


def entry(shown: Shown) -> Entry:
    """A message as the fold's invariants see it (a summary as the message it is written
    into)."""
    kind: Any = shown.kind if shown.kind in ("ai", "tool", "system") else "human"
    return Entry(kind, shown.id, shown.calls, shown.answers)


def splits_units(messages: tuple[Message, ...], raw: int) -> bool:
    """Moving the cut at ``raw`` back to the nearest model message that asked for one of
    the results it lands on (if it lands on any) still keeps a result whose call is
    before the cut: results that came back late, or interleaved across model messages."""
    asker: dict[str | None, int] = {c: i for i, m in enumerate(messages) for c in m.calls}
    start, end = raw, raw
    while end < len(messages) and messages[end].kind == "tool":
        end += 1
    nearest = [asker[m.answers] for m in messages[raw:end] if asker.get(m.answers, raw) < raw]
    if nearest:
        start = max(nearest)
    return any(asker.get(m.answers, start) < start for m in messages[start:])


@st.composite
def settings_for(draw: st.DrawFn, adapter: FoldAdapter) -> Settings:
    """A configuration the harness takes: each trigger form, threshold kind and kept
    tail it declares (a fraction only with a window)."""
    fractions = FRACTION in adapter.trigger_kinds or FRACTION in adapter.keep_kinds
    only_fraction = (FRACTION,) in (tuple(adapter.trigger_kinds), tuple(adapter.keep_kinds))
    window = draw(
        st.sampled_from(WINDOWS[1:] if only_fraction else WINDOWS if fractions else (None,))
    )

    def usable(declared: Sequence[str]) -> list[str]:
        return [k for k in KINDS if k in declared and (k != FRACTION or window)]

    kinds = usable(adapter.trigger_kinds)

    def threshold(kind: str) -> float:
        if kind == MESSAGES:
            return draw(st.integers(2, 14))
        if kind == FRACTION:
            return draw(st.sampled_from(FRACTIONS))
        return draw(st.integers(10, 300))

    def one() -> tuple[str, float]:
        kind = draw(st.sampled_from(kinds))
        return kind, threshold(kind)

    form = draw(st.sampled_from([f for f in FORMS if f in adapter.forms]))
    trigger: tuple[tuple[tuple[str, float], ...], ...]
    if form == ONE:
        trigger = ((one(),),)
    elif form == ANY:  # an empty list: no clause, never a fold
        trigger = tuple((one(),) for _ in range(draw(st.integers(0, 3))))
    else:
        clauses = []
        for _ in range(draw(st.integers(1, 2))):
            chosen = draw(st.lists(st.sampled_from(kinds), min_size=1, max_size=2, unique=True))
            clauses.append(tuple((k, threshold(k)) for k in chosen))
        trigger = tuple(clauses)
    keep_kind = draw(st.sampled_from(usable(adapter.keep_kinds)))
    if keep_kind == MESSAGES:
        keep: tuple[str, float] = (MESSAGES, draw(st.integers(1, 6)))
    elif keep_kind == FRACTION:
        keep = (FRACTION, draw(st.sampled_from(FRACTIONS[:5])))
    else:
        keep = (keep_kind, draw(st.integers(5, 150)))
    return Settings(form, trigger, keep, window, draw(st.sampled_from(adapter.summarizers)))


def check_adapter(adapter: FoldAdapter) -> None:
    """What the adapter declares is what the protocol knows."""
    bad = [
        f"{what} {sorted(set(got) - set(known))}"
        for what, got, known in (
            ("forms", adapter.forms, FORMS),
            ("trigger kinds", adapter.trigger_kinds, KINDS),
            ("keep kinds", adapter.keep_kinds, KINDS),
        )
        if not got or set(got) - set(known)
    ]
    if bad:
        raise ValueError(f"{adapter.name}: unknown or no {'; '.join(bad)}")


#: the properties each of the fold's invariants counts against (docs/properties.md)
COUNTS_AGAINST = {"F1": ("C1", "S6"), "F2": ("S6",), "F3": ("C1",), "F4": ("C1",)}


def against(broken: Sequence[str]) -> str:
    """The properties the broken invariants count against, as a failure opens with them
    (``C1/S6``), so a report attributes it to those alone."""
    props = [p for b in broken for p in COUNTS_AGAINST[b[:2]]]
    return "/".join(dict.fromkeys(props))


def never(_step: Step) -> None:
    """No registered finding: every step is compared."""
    return None


def make_machine(adapter: FoldAdapter, left_out: LeftOut = never) -> type[FoldMachine]:
    """The fold lockstep of ``adapter``'s summarization (``left_out``: its target's
    registered findings' regions)."""
    check_adapter(adapter)
    shapes.declare(
        HOLDS,
        ("the conversation holds", FEATURES),
        ("the step", ("no fold", "fold", "failed summary")),
    )
    shapes.declare(
        SETTINGS,
        ("trigger", tuple(f for f in FORMS if f in adapter.forms)),
        ("keep", tuple(k for k in KINDS if k in adapter.keep_kinds)),
    )

    class Lockstep(FoldMachine):
        @initialize(settings=settings_for(adapter), size=st.integers(1, 40), opening=OPENINGS)
        def setup(self, settings: Settings, size: int, opening: str) -> None:
            self.open(settings, size, opening)

    Lockstep.adapter, Lockstep.left_out = adapter, staticmethod(left_out)
    return Lockstep


class FoldMachine(RuleBasedStateMachine):
    """The machine's rules and checks; :func:`make_machine` binds it to an adapter."""

    adapter: FoldAdapter
    left_out: LeftOut

    def open(self, settings: Settings, size: int, opening: str) -> None:
        """A run starts with what the user says, or what is left of an edited history."""
        self.start(settings)
        if opening == "human":
            self.user(size)
        elif opening in ("ai", "call"):
            id = self.new_id("a")
            calls = (f"{id}c0",) if opening == "call" else ()
            self.add(Message("ai", id, text(id, size), calls=calls))
            self.pending.extend(calls)
        else:
            self.orphaned_result(size)

    def start(self, settings: Settings) -> None:
        note(f"{self.adapter.name}: {self.adapter.spell(settings)}")
        self.settings = settings
        self.conversation = self.adapter.conversation(settings, tokens)
        self.trigger = model_trigger(settings, self.adapter)
        self.keep = model_keep(settings)
        self.model: tuple[Message, ...] = ()
        self.reports: dict[str, int] = {}  # every report drawn, by its message's id
        self.pending: list[str] = []  # calls asked for and not answered yet, oldest first
        self.ids = itertools.count()
        self.summaries = 0
        #: the registered findings whose regions a step entered (the model then took the
        #: harness's conversation: a program compares nothing after one)
        self.entered: list[str] = []

    def new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self.ids)}"

    def add(self, message: Message, other_report: int | None = None) -> None:
        """Add ``message`` to both; ``other_report``: the harness is also given this
        report, made by another provider (the model holds none)."""
        self.model = (*self.model, message)
        kind: Any = message.kind
        reported = message.reported if other_report is None else other_report
        self.conversation.append(
            Added(
                kind,
                message.id,
                message.text,
                message.calls,
                message.answers,
                reported,
                by_other=other_report is not None,
            )
        )
        self.compare()

    def view(self, message: Message) -> tuple[str, str, tuple[str, ...], str | None]:
        kind = self.adapter.summary_kind if message.kind == "summary" else message.kind
        return kind, message.text, message.calls, message.answers

    def compare(self) -> None:
        got = [(s.kind, s.text, s.calls, s.answers) for s in self.conversation.shown()]
        want = [self.view(m) for m in self.model]
        assert got == want, f"C1: the conversation differs from the model's:\n{got}\n!=\n{want}"

    @rule(size=st.integers(1, 40))
    def user(self, size: int) -> None:
        id = self.new_id("h")
        self.add(Message("human", id, text(id, size)))

    @rule(size=st.integers(1, 20))
    def orphaned_result(self, size: int) -> None:
        """A tool result whose call is not in the conversation (the history was edited,
        or restored from elsewhere): no kept tail may start with it."""
        id = self.new_id("t")
        self.add(Message("tool", id, text(id, size), answers=f"gone-{id}"))

    def token_thresholds(self) -> list[int]:
        """The counts the trigger's token and fraction thresholds sit at (a fraction's
        as that share of the window, rounded down)."""
        out: list[int] = []
        for clause in self.trigger.clauses:
            for kind, value in clause.items():
                if kind == "tokens":
                    out.append(int(value))
                elif kind == FRACTION and self.settings.window is not None:
                    out.append(math.floor(self.settings.window * value))
        return out

    @rule(pick=st.integers(0, 5), offset=OFFSETS)
    def user_at_threshold(self, pick: int, offset: int) -> None:
        """The user says just enough to bring the count one below, at or one above a
        threshold of the trigger (when it is not past it already); the next model call
        meets it."""
        aims = self.token_thresholds()
        if aims:
            self.user(max(aims[pick % len(aims)] + offset - count(self.model), 1))

    @rule(
        summarizer_fails=FAILS,
        calls=st.integers(0, 3),
        size=st.integers(1, 40),
        reported=REPORTS,
        late=LATE,
        by_other=BY_OTHER,
    )
    def model_call(
        self,
        summarizer_fails: bool,
        calls: int,
        size: int,
        reported: int | tuple[int, int] | None,
        late: int = 0,
        by_other: bool = False,
    ) -> None:
        """Before the model call the harness may fold; then the model answers, with
        parallel tool calls, and maybe a report of its tokens (one aimed at a threshold:
        a pick and an offset), its own provider's or ``by_other`` provider's (which
        counts nothing of the window the thresholds measure). The results of all but
        its ``late`` last calls come back at once; those wait for :meth:`answer`."""
        if not self.before_model(summarizer_fails):
            return  # the step failed: the run ends without a model call
        if isinstance(reported, tuple):
            aims = self.token_thresholds()
            pick, offset = reported
            reported = max(aims[pick % len(aims)] + offset, 1) if aims else None
        id = self.new_id("a")
        call_ids = tuple(f"{id}c{i}" for i in range(calls))
        other = reported if by_other else None
        if other is not None:
            reported = None
        if reported is not None:
            self.reports[id] = reported
        self.add(Message("ai", id, text(id, size), calls=call_ids, reported=reported), other)
        waiting = call_ids[len(call_ids) - min(late, calls) :]
        self.pending.extend(waiting)
        for call in call_ids:
            if call not in waiting:
                self.respond(call, size // 2 + 1)

    def respond(self, call: str, size: int) -> None:
        tid = self.new_id("t")
        self.add(Message("tool", tid, text(tid, size), answers=call))

    @rule(said=st.integers(1, 20), picks=PICKS, size=st.integers(1, 20))
    def answer_after_the_user(self, said: int, picks: list[int], size: int) -> None:
        """The user speaks while calls are still waiting, then their results come back:
        results answered late."""
        if self.pending:
            self.user(said)
            self.answer(picks, size)

    @rule(picks=PICKS, size=st.integers(1, 20))
    def answer(self, picks: list[int], size: int) -> None:
        """Results of calls still waiting come back, any of them in any order, after
        whatever was said since (the model's own next call included)."""
        for pick in picks:
            if self.pending:
                self.respond(self.pending.pop(pick % len(self.pending)), size)

    @rule(summarizer_fails=FAILS)
    def failed_model_call(self, summarizer_fails: bool) -> None:
        """The harness runs, then the model call fails (an outage): no answer is added."""
        self.before_model(summarizer_fails)

    def decide(self, before: tuple[Message, ...], summarizer_fails: bool) -> Step:
        """The model's step before a model call on ``before``."""
        window = self.settings.window
        fires = self.trigger.fires(before, count, window)
        cut = self.keep.cut(before, count) if fires else 0
        raw = self.keep.tail(before, count)
        restored = tuple(replace(m, reported=self.reports.get(m.id)) for m in before)
        return Step(
            raw_cut=raw,
            cut=cut,
            fires=fires and cut > 0,
            due=fires,
            fires_on_stale=self.trigger.fires(restored, count, window)
            and self.keep.cut(restored, count) > 0,
            summarizer_fails=summarizer_fails,
            in_group=raw < len(before)
            and before[raw].kind == "tool"
            and unit_start(before, raw) < raw,
            splits_units=splits_units(before, raw),
        )

    def before_model(self, summarizer_fails: bool) -> bool:
        """One step before a model call on both sides; whether it went on to the model."""
        before = self.model
        step = self.decide(before, summarizer_fails)
        # a statistic (--hypothesis-show-statistics): how often a boundary decides a step
        if step.fires and not replace(self.trigger, inclusive=False).fires(
            before, count, self.settings.window
        ):
            event("the trigger holds only by reaching a threshold")
        was = [entry(s) for s in self.conversation.shown()]
        observed = self.conversation.before_model(summarizer_fails)
        prompt = observed.prompt or ""
        broken = check_fold(
            was,
            [entry(s) for s in self.conversation.shown()],
            observed.folded,
            sent={e.id for e in was if f"[{e.id}]" in prompt},
            traceable={m.id for m in before if f"[{m.id}]" in m.text},
        )
        step = replace(step, orphaned=any(b.startswith("F3") for b in broken))
        finding = self.left_out(step)
        if finding is not None:
            event(f"left out: {finding}")
            self.entered.append(finding)
            self.adopt(observed.folded)
            return observed.raised is None
        assert not broken, (
            against(broken) + ": the fold broke its invariants:\n" + "\n".join(broken)
        )
        did = "no fold" if not step.fires else "failed summary" if summarizer_fails else "fold"
        for feature in features(before):
            shapes.reached(HOLDS, feature, did)
        if did == "fold":
            shapes.reached(SETTINGS, self.settings.form, self.settings.keep[0])
        if not step.fires:
            assert observed.raised is None, f"C1: no fold was due, yet it raised {observed.raised}"
            assert not observed.folded, (
                f"C1: folded where the trigger {self.trigger} does not hold "
                f"({count(before)} tokens, {len(before)} messages)"
            )
            assert observed.prompt is None, "S6: the summarizer was called without a fold"
            self.compare()
            return True
        folded, tail = before[: step.cut], before[step.cut :]
        if summarizer_fails:
            # a harness that did not try to fold broke the trigger (C1), not the failure
            assert observed.prompt is not None or observed.raised is not None, (
                f"C1: no fold where the trigger {self.trigger} holds "
                f"({count(before)} tokens, {len(before)} messages)"
            )
            assert observed.raised is not None and SUMMARY_DOWN in observed.raised, (
                f"S7: the summary failed, yet the step did not fail (raised {observed.raised})"
            )
            self.compare()  # nothing changed
            return False
        assert observed.raised is None, f"C1: the fold raised {observed.raised}"
        assert observed.folded, (
            f"C1: no fold where the trigger {self.trigger} holds "
            f"({count(before)} tokens, {len(before)} messages) and keep "
            f"{self.keep} leaves {step.cut} to fold"
        )
        event("folded")
        first = self.conversation.shown()[0]
        assert (
            first.kind == self.adapter.summary_kind
            and observed.summary is not None
            and observed.summary in first.text
        ), f"S6: the first message is not the new summary {observed.summary!r}: {first}"
        # what is kept first (C1), then what the summarizer was sent of it (S6)
        self.model = fold(before, step.cut, Message("summary", first.id, first.text))
        self.compare()
        missing = [m.id for m in folded if f"[{m.id}]" in m.text and f"[{m.id}]" not in prompt]
        leaked = [m.id for m in tail if f"[{m.id}]" in prompt]
        assert not missing and not leaked, (
            f"S6: the summarizer was not sent exactly the folded messages: missing {missing}, "
            f"sent from the kept tail {leaked}"
        )
        return True

    def adopt(self, folded: bool) -> None:
        """After a step in a known finding's region, the model takes the harness's
        conversation as it is (kept messages lose their reports when it folded)."""
        by_id = {m.id: m for m in self.model}
        adopted = []
        for shown in self.conversation.shown():
            known = by_id.get(shown.id)
            if known is None:
                adopted.append(Message("summary", shown.id, shown.text))
            else:
                adopted.append(replace(known, reported=None) if folded else known)
        self.model = tuple(adopted)
        self.compare()


def run_lockstep(adapter: FoldAdapter, left_out: LeftOut = never, settings: Any = None) -> None:
    """Run the fold lockstep on ``adapter`` as one test (under the current profile, or
    ``settings``)."""
    run_state_machine_as_test(make_machine(adapter, left_out), settings=settings)
