"""The fold concern's seed-free programs: the lockstep's own steps and checks
(:mod:`ctxaudit.locksteps.fold`), in a fixed order, without Hypothesis.

Each reaches a boundary a drawing reaches only now and then, or never: each threshold's
"reaches" against "passes" on every run, a window so small that a fraction of it rounds
to no token, a conversation that opens with a tool result, a clause that fails before
one that holds, a newest message larger than the tail, results answered late or
interleaved across model messages, a call still pending at a fold. Every step is checked
as the lockstep checks it (the invariants, then the model); the kinds a program then
expects are the model's, compared only where no step entered a registered finding's
region (there the model took the harness's conversation).

A program the harness cannot run (a trigger form, a kind of threshold or tail, a
summarizer it does not take) raises :class:`NotApplicable` with the reason; a suite
reports it skipped, never passed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ctxaudit.concerns.fold import (
    ANY,
    BY_FUNCTION,
    BY_MODEL,
    CLAUSES,
    FRACTION,
    ONE,
    FoldAdapter,
    Settings,
)
from ctxaudit.locksteps.fold import FoldMachine, LeftOut, count, make_machine, never
from ctxaudit.locksteps.fold_shapes import text
from model.fold import Message


class NotApplicable(Exception):
    """The harness does not take what the program needs: the reason."""


def settings(
    trigger: Any, keep: tuple[str, float], window: int | None = None, summarizer: str = BY_MODEL
) -> Settings:
    """Settings written as a user writes them: one ``(kind, threshold)``, a tuple of
    them (any of them), or a tuple of dicts (clauses)."""
    if trigger and isinstance(trigger[0], str):
        return Settings(ONE, ((tuple(trigger),),), keep, window, summarizer)
    if any(isinstance(t, dict) for t in trigger):
        clauses = tuple(tuple(c.items()) for c in trigger)
        return Settings(CLAUSES, clauses, keep, window, summarizer)
    return Settings(ANY, tuple((tuple(t),) for t in trigger), keep, window, summarizer)


def needs(adapter: FoldAdapter, s: Settings) -> None:
    """Raise :class:`NotApplicable` where the harness does not take ``s``."""
    kinds = {k for clause in s.trigger for k, _ in clause}
    lacks = [
        *([f"the trigger form '{s.form}'"] if s.form not in adapter.forms else []),
        *[f"a {k} threshold" for k in sorted(kinds - set(adapter.trigger_kinds))],
        *([f"a kept tail of {s.keep[0]}"] if s.keep[0] not in adapter.keep_kinds else []),
        *([f"a summarizer {s.summarizer}"] if s.summarizer not in adapter.summarizers else []),
    ]
    if lacks:
        raise NotApplicable(f"{adapter.name} takes no {', no '.join(lacks)}")


@dataclass
class Run:
    """A program's machine, and what it checks."""

    adapter: FoldAdapter
    left_out: LeftOut = never
    machine: FoldMachine = field(init=False)

    def start(self, s: Settings, as_written: bool = False) -> FoldMachine:
        """The machine under ``s``, its thresholds of messages and tokens written as
        reached at the count the program means; where the harness folds only past a
        threshold, one below it (so the same step folds), unless ``as_written``."""
        needs(self.adapter, s)
        if not (self.adapter.contract.inclusive or as_written):
            below = tuple(
                tuple((k, v - 1 if k != FRACTION else v) for k, v in clause) for clause in s.trigger
            )
            s = replace(s, trigger=below)
        self.machine = make_machine(self.adapter, self.left_out)()
        self.machine.start(s)
        return self.machine

    def kinds(self, want: Sequence[str]) -> None:
        """The conversation's kinds are ``want``, unless a step entered a registered
        finding's region (the model then holds the harness's conversation)."""
        got = [m.kind for m in self.machine.model]
        if not self.machine.entered:
            assert got == list(want), f"{got} != {list(want)}"


Program = Callable[[Run], None]


def threshold_met_by_reaching_it(run: Run, trigger: tuple[str, float], window: int | None) -> None:
    """A token threshold of 20 (given, or a tenth of a 200-token window): 19 tokens in
    two messages do not fold, 20 do ("reaches or exceeds"; where the harness documents
    "exceeds", 21 do). The one program whose thresholds are as written."""
    m = run.start(settings(trigger, ("messages", 1), window), as_written=True)
    m.user(10)
    m.user(9)
    m.failed_model_call(summarizer_fails=False)
    run.kinds(["human", "human"])
    m.user(1)  # "[h2]": one token
    assert count(m.model) == 20
    m.failed_model_call(summarizer_fails=False)
    if run.adapter.contract.inclusive:
        run.kinds(["summary", "human"])
    else:
        run.kinds(["human", "human", "human"])
        m.user(1)
        m.failed_model_call(summarizer_fails=False)
        run.kinds(["summary", "human"])


def report_meets_a_threshold_by_reaching_it(
    run: Run, trigger: tuple[str, float], window: int | None
) -> None:
    """Where the harness reads provider reports, a report of 49 tokens under a threshold
    of 50 (given, or a tenth of a 500-token window) does not fold a 10-token
    conversation, a report of 50 does (of 51, where it documents "exceeds"); where it
    does not, neither does."""
    m = run.start(settings(trigger, ("messages", 1), window), as_written=True)
    m.user(5)
    m.model_call(summarizer_fails=False, calls=0, size=5, reported=49)
    m.failed_model_call(summarizer_fails=False)
    run.kinds(["human", "ai"])
    contract = run.adapter.contract
    m.model_call(summarizer_fails=False, calls=0, size=5, reported=50 if contract.inclusive else 51)
    m.failed_model_call(summarizer_fails=False)
    run.kinds(["summary", "ai"] if contract.reports else ["human", "ai", "ai"])


def report_made_before_a_fold_is_not_read_after_it(run: Run) -> None:
    """A report of 60 tokens under a threshold of 50 folds a 10-token conversation (where
    the harness reads reports); the answer it was made for is kept, and its report,
    about a prompt the fold removed, no longer describes the conversation: the next
    step does not fold again."""
    m = run.start(settings(("tokens", 50), ("messages", 1)))
    m.user(5)
    m.model_call(summarizer_fails=False, calls=0, size=5, reported=60)
    m.failed_model_call(summarizer_fails=False)
    reports = run.adapter.contract.reports
    run.kinds(["summary", "ai"] if reports else ["human", "ai"])
    m.failed_model_call(summarizer_fails=False)
    run.kinds(["summary", "ai"] if reports else ["human", "ai"])


def report_by_another_provider_is_not_read(run: Run) -> None:
    """A report of 60 tokens under a threshold of 50, made by another provider than the
    one whose window the threshold measures (another model answered): a 10-token
    conversation does not fold; the same report by its own provider folds it (where the
    harness reads reports)."""
    m = run.start(settings(("tokens", 50), ("messages", 1)))
    m.user(5)
    m.model_call(summarizer_fails=False, calls=0, size=5, reported=60, by_other=True)
    m.failed_model_call(summarizer_fails=False)
    run.kinds(["human", "ai"])
    m.model_call(summarizer_fails=False, calls=0, size=5, reported=60)
    m.failed_model_call(summarizer_fails=False)
    run.kinds(["summary", "ai"] if run.adapter.contract.reports else ["human", "ai", "ai"])


def keep_fraction_under_one_token_keeps_a_one_token_tail(run: Run) -> None:
    """A kept tail of 0.05 of a 10-token window is half a token, and the kept tail is the
    longest suffix of at most one token: the answer with no text and the one-token
    question stay, only the first question is folded."""
    m = run.start(settings(("messages", 3), (FRACTION, 0.05), 10))
    m.user(5)
    m.model_call(summarizer_fails=False, calls=0, size=0, reported=None)
    m.user(1)  # "[h2]": one token
    assert [count([x]) for x in m.model] == [5, 0, 1]
    m.model_call(summarizer_fails=False, calls=0, size=5, reported=None)
    run.kinds(["summary", "ai", "human", "ai"])


def leading_tool_result(run: Run, s: Settings) -> FoldMachine:
    """A conversation that opens with a tool result (what came before it is gone), then
    a question, 10 tokens in all: exactly what ``s`` keeps."""
    m = run.start(s)
    id = m.new_id("t")
    m.add(Message("tool", id, text(id, 5), answers="gone"))
    m.user(5)
    assert count(m.model) == 10
    return m


def tail_of_exactly_keep_messages_is_not_folded(run: Run) -> None:
    """Two messages, a tail of two messages: everything is kept, even when the first is
    a tool result (nothing to fold, so nothing to move the cut past)."""
    m = leading_tool_result(run, settings(("messages", 2), ("messages", 2)))
    m.failed_model_call(summarizer_fails=False)
    run.kinds(["tool", "human"])


def conversation_of_exactly_keep_tokens_is_not_folded(run: Run) -> None:
    """10 tokens, a tail of 0.1 of a 100-token window (10 tokens): the whole
    conversation fits the tail, even when it opens with a tool result."""
    m = leading_tool_result(run, settings(("messages", 2), (FRACTION, 0.1), 100))
    m.failed_model_call(summarizer_fails=False)
    run.kinds(["tool", "human"])


def clause_that_fails_does_not_stop_the_next(run: Run, trigger: Any) -> None:
    """A list of two thresholds whose first does not hold: three 2-token messages fold,
    on the second (three messages, or six tokens); two do not."""
    m = run.start(settings(trigger, ("messages", 1)))
    m.user(2)
    m.user(2)
    m.failed_model_call(summarizer_fails=False)
    run.kinds(["human", "human"])
    m.user(2)
    m.failed_model_call(summarizer_fails=False)
    run.kinds(["summary", "human"])


def empty_trigger_never_folds(run: Run) -> None:
    """An empty list of thresholds: no clause, so no fold, however long the conversation."""
    m = run.start(settings((), ("messages", 1)))
    for _ in range(20):
        m.user(40)
    m.failed_model_call(summarizer_fails=False)
    assert len(m.model) == 20 and m.model[0].kind == "human"


def newest_message_larger_than_the_tail_is_kept_alone(run: Run) -> None:
    """A tail of 5 tokens: of two 10-token messages none fits, and the newest is kept
    all the same; one message is never folded."""
    m = run.start(settings(("messages", 1), ("tokens", 5)))
    m.user(10)
    m.failed_model_call(summarizer_fails=False)
    run.kinds(["human"])
    m.user(10)
    m.failed_model_call(summarizer_fails=False)
    run.kinds(["summary", "human"])


def cut_on_an_orphaned_result_moves_past_it(run: Run) -> None:
    """A tail of two messages lands on a tool result whose call is not in the
    conversation, after a model message that asked for another tool: the cut moves
    forward past the orphan (never back to that model message), and only the newest
    question is kept."""
    m = run.start(settings(("messages", 6), ("messages", 2)))
    m.user(3)
    m.model_call(summarizer_fails=False, calls=1, size=3, reported=None)
    m.user(3)
    m.orphaned_result(3)
    m.user(3)
    run.kinds(["human", "ai", "tool", "human", "tool", "human"])
    m.failed_model_call(summarizer_fails=False)
    run.kinds(["summary", "human"])


def summarizer_function_is_sent_exactly_the_folded_messages(run: Run) -> None:
    """A summarizer function writes the summary of exactly what is folded, and when it
    raises, the step fails and the conversation is as it was."""
    m = run.start(settings(("messages", 3), ("messages", 1), summarizer=BY_FUNCTION))
    for _ in range(3):
        m.user(3)
    m.failed_model_call(summarizer_fails=True)
    run.kinds(["human", "human", "human"])
    m.failed_model_call(summarizer_fails=False)
    run.kinds(["summary", "human"])


def orphaned_result_as_the_newest_message_is_folded(run: Run) -> None:
    """A tail of one message lands on the newest message, a tool result whose call is
    not in the conversation: it moves past it to the end, and everything is folded."""
    m = run.start(settings(("messages", 3), ("messages", 1)))
    m.user(3)
    m.user(3)
    m.orphaned_result(3)
    m.failed_model_call(summarizer_fails=False)
    run.kinds(["summary"])


def result_answered_late_keeps_its_call(run: Run) -> None:
    """A call answered after the user spoke again, a tail of two messages: the cut lands
    on the user's message and moves back to the call, so its result is not kept alone."""
    m = run.start(settings(("messages", 4), ("messages", 2)))
    m.user(3)
    m.model_call(summarizer_fails=False, calls=1, size=3, reported=None, late=1)
    m.user(3)
    m.answer([0], 3)
    m.failed_model_call(summarizer_fails=False)
    run.kinds(["summary", "ai", "human", "tool"])


def interleaved_results_keep_both_calls(run: Run) -> None:
    """Two model messages ask for a tool each, and both results come back after the
    second, the first's first: keeping two messages keeps both askers."""
    m = run.start(settings(("messages", 5), ("messages", 2)))
    m.user(3)
    m.model_call(summarizer_fails=False, calls=1, size=3, reported=None, late=1)
    m.model_call(summarizer_fails=False, calls=1, size=3, reported=None, late=1)
    m.answer([0, 0], 3)
    m.failed_model_call(summarizer_fails=False)
    run.kinds(["summary", "ai", "ai", "tool", "tool"])


def call_pending_at_a_fold_is_summarized_and_its_late_result_moved_past(run: Run) -> None:
    """A run that opens with a model message whose call is still pending when the fold
    summarizes it; its result, arriving after, answers a call that is gone, and the
    next fold's cut on it moves past it."""
    m = run.start(settings(("messages", 3), ("messages", 1)))
    id = m.new_id("a")
    m.add(Message("ai", id, text(id, 3), calls=(f"{id}c0",)))
    m.pending.append(f"{id}c0")
    m.user(3)
    m.user(3)
    m.failed_model_call(summarizer_fails=False)
    run.kinds(["summary", "human"])
    m.answer([0], 3)
    m.user(3)
    m.failed_model_call(summarizer_fails=False)
    run.kinds(["summary", "human"])


FORMS = {
    ONE: ("tokens", 10),
    ANY: (("messages", 20), ("tokens", 10)),
    CLAUSES: ({"messages": 2, "tokens": 10},),
}
TAILS: dict[str, tuple[tuple[str, float], int | None]] = {
    "messages": (("messages", 1), None),
    "tokens": (("tokens", 5), None),
    FRACTION: ((FRACTION, 0.05), 100),
}


def every_trigger_form_folds_to_every_kind_of_tail(run: Run, form: str, tail: str) -> None:
    """Each form of trigger (one threshold, a list, a clause of two) at 10 tokens, with
    a tail of one message or at most 5 tokens (given, or a twentieth of a 100-token
    window): one 6-token question does not fold, two do, and only the newest is kept."""
    keep, window = TAILS[tail]
    m = run.start(settings(FORMS[form], keep, window))
    m.user(6)
    m.failed_model_call(summarizer_fails=False)
    run.kinds(["human"])
    m.user(6)
    m.failed_model_call(summarizer_fails=False)
    run.kinds(["summary", "human"])


def run_that_opens_with_a_model_message_keeps_it_when_the_summary_fails(run: Run) -> None:
    """What is left of a restored history opens with a model message; the fold's summary
    call fails, the step fails, and the conversation is as it was."""
    m = run.start(settings(("messages", 2), ("messages", 1)))
    id = m.new_id("a")
    m.add(Message("ai", id, text(id, 3)))
    m.user(3)
    m.failed_model_call(summarizer_fails=True)
    run.kinds(["ai", "human"])


def late_or_interleaved(run: Run, shape: str, trigger: int) -> FoldMachine:
    """A result answered late (after the user spoke again) or two model messages' results
    interleaved, under a message trigger of ``trigger`` and a tail of two messages."""
    m = run.start(settings(("messages", trigger), ("messages", 2)))
    m.user(3)
    m.model_call(summarizer_fails=False, calls=1, size=3, reported=None, late=1)
    if shape == "late":
        m.user(3)
        m.answer([0], 3)
    else:
        m.model_call(summarizer_fails=False, calls=1, size=3, reported=None, late=1)
        m.answer([0, 0], 3)
    return m


def late_and_interleaved_results_when_no_fold_is_due_or_the_summary_fails(
    run: Run, shape: str
) -> None:
    """The same conversations under a trigger they do not meet (nothing changes), and
    under one they meet with a summary call that fails (the step fails, nothing changes)."""
    m = late_or_interleaved(run, shape, 10)
    before = [x.kind for x in m.model]
    m.failed_model_call(summarizer_fails=False)
    run.kinds(before)
    m = late_or_interleaved(run, shape, 4)
    m.failed_model_call(summarizer_fails=True)
    run.kinds(before)


#: small conversations whose every cut a program tries: (kind, calls, answers) each,
#: three tokens a message
GRAPHS: dict[str, tuple[tuple[str, tuple[str, ...], str | None], ...]] = {
    # what is left of a restored history opens with a model message that asked for a
    # tool, then its result: a cut on the result moves back to the first message
    "opens-with-a-call": (
        ("ai", ("c",), None),
        ("tool", (), "c"),
        ("human", (), None),
        ("ai", (), None),
    ),
    # a result whose call is gone, and a later model message whose call reuses its id
    # (ids are the provider's strings; nothing makes them unique across a history):
    # only a call made before a result can be what it answers
    "orphan-then-its-id-reused": (
        ("human", (), None),
        ("tool", (), "x"),
        ("human", (), None),
        ("ai", ("x",), None),
    ),
}


def every_cut_of_a_small_conversation(run: Run, graph: str, unit: str) -> None:
    """One conversation of :data:`GRAPHS`, folded once under every kept tail it can
    have (each count of its messages, or the same count of tokens): each cut where the
    model puts it, the conversation folded or not as the model says."""
    shape = GRAPHS[graph]
    for k in range(1, len(shape)):
        keep = ("messages", k) if unit == "messages" else ("tokens", 3 * k)
        m = run.start(settings(("messages", len(shape)), keep))
        for kind, calls, answers in shape:
            id = m.new_id(kind[0])
            m.add(Message(kind, id, text(id, 3), calls=calls, answers=answers))  # type: ignore[arg-type]
            m.pending.extend(calls)
        m.failed_model_call(summarizer_fails=False)


#: every program, by the name a test id shows (the function's, and its variant's)
PROGRAMS: dict[str, Program] = {}


def _register(program: Callable[..., None], **variants: tuple[Any, ...]) -> None:
    for label, args in (variants or {"": ()}).items():
        name = program.__name__ + (f"[{label}]" if label else "")
        PROGRAMS[name] = _bound(program, args)


def _bound(program: Callable[..., None], args: tuple[Any, ...]) -> Program:
    def run(machine: Run) -> None:
        program(machine, *args)

    return run


_register(
    threshold_met_by_reaching_it, tokens=(("tokens", 20), None), fraction=((FRACTION, 0.1), 200)
)
_register(
    report_meets_a_threshold_by_reaching_it,
    tokens=(("tokens", 50), None),
    fraction=((FRACTION, 0.1), 500),
)
_register(report_made_before_a_fold_is_not_read_after_it)
_register(report_by_another_provider_is_not_read)
_register(keep_fraction_under_one_token_keeps_a_one_token_tail)
_register(tail_of_exactly_keep_messages_is_not_folded)
_register(conversation_of_exactly_keep_tokens_is_not_folded)
_register(
    clause_that_fails_does_not_stop_the_next,
    tokens_then_messages=((("tokens", 100), ("messages", 3)),),
    messages_then_tokens=((("messages", 10), ("tokens", 6)),),
)
_register(empty_trigger_never_folds)
_register(newest_message_larger_than_the_tail_is_kept_alone)
_register(cut_on_an_orphaned_result_moves_past_it)
_register(summarizer_function_is_sent_exactly_the_folded_messages)
_register(orphaned_result_as_the_newest_message_is_folded)
_register(result_answered_late_keeps_its_call)
_register(interleaved_results_keep_both_calls)
_register(call_pending_at_a_fold_is_summarized_and_its_late_result_moved_past)
_register(
    every_trigger_form_folds_to_every_kind_of_tail,
    **{f"{form}-{tail}".replace(" ", "-"): (form, tail) for form in FORMS for tail in TAILS},
)
_register(run_that_opens_with_a_model_message_keeps_it_when_the_summary_fails)
_register(
    every_cut_of_a_small_conversation,
    **{f"{graph}-{unit}": (graph, unit) for graph in GRAPHS for unit in ("messages", "tokens")},
)
_register(
    late_and_interleaved_results_when_no_fold_is_due_or_the_summary_fails,
    late=("late",),
    interleaved=("interleaved",),
)


def run_program(name: str, adapter: FoldAdapter, left_out: LeftOut = never) -> None:
    """Run one program on ``adapter`` (:class:`NotApplicable` where it cannot)."""
    PROGRAMS[name](Run(adapter, left_out))
