"""The restore concern's seed-free programs: the lockstep's own rules
(:mod:`ctxaudit.locksteps.restore`), called in a fixed order as a search calls them,
without Hypothesis.

Each meets on every run a cell of the restore tables a search can miss: each manager's
reduction followed by a restore, pinned or not, after a failed summary, after a proactive
reduction, then a reduction after the restore and a restore again, with each store the
harness has; a fold whose kept messages open on a tool result (R5), after a whole turn or
after a provider error; an agent restored while a call awaits the user's answer; an agent
built with messages of its own, restored; an agent whose process dies while a tool runs,
after a fold or a trim and a tool's write in the same turn; a prompt retried after a
provider error (the same object, held twice) that a guardrail redacts.

A program the harness cannot run (a manager, pins, proactive reduction or an asking tool
it lacks) raises :class:`NotApplicable` with the reason; a suite reports it skipped,
never passed.
"""

from __future__ import annotations

from typing import Any

from ctxaudit.concerns.restore import SUMMARIZING, WINDOW, RestoreAdapter, Settings
from ctxaudit.locksteps.restore import LeftOut, make_machine, never


class NotApplicable(Exception):
    """The harness does not have what the program needs: the reason."""


#: a program's step: a rule of the machine and its arguments, as a search draws them
Step = tuple[str, dict[str, Any]]
RESTORE: Step = ("restore", {})
ANSWER: Step = ("answer", {})


def turn(
    rounds: list[int],
    overflow: int | None = None,
    full: int | None = None,
    summary_fails: bool = False,
    error: int | None = None,
    writer: int | None = None,
    asks: int | None = None,
    redact: bool = False,
    dies: int | None = None,
    retry: bool = False,
    user_writes: bool = False,
) -> Step:
    """A turn of a program, as the search would draw it."""
    drawn = dict(overflow=overflow, full=full, summary_fails=summary_fails, error=error)
    more = dict(writer=writer, asks=asks, redact=redact, dies=dies, retry=retry)
    if user_writes:
        more["user_writes"] = True
    return ("turn", dict(rounds=rounds, **drawn, **more))


def _fold_twice() -> list[Step]:
    """Turns with tool rounds (some writing the agent's state), a reduction on an overflow
    with a round's results just added, a restore, a reduction after it, a restore again."""
    return [
        turn([2], writer=0),
        turn([1]),
        turn([1], overflow=1),
        RESTORE,
        turn([1, 2], writer=1),
        turn([], overflow=0),
        RESTORE,
        turn([1]),
    ]


def _text_fold() -> list[Step]:
    """Two answered prompts, then a third whose first call overflows: a fold of text."""
    return [turn([]), turn([]), turn([], overflow=0)]


def _ask_and_restore() -> list[Step]:
    return [
        turn([1]),
        turn([1, 1, 1], overflow=2, asks=1, writer=0),
        RESTORE,
        ANSWER,
        RESTORE,
        turn([1], asks=0),
        ANSWER,
        turn([1]),
    ]


#: the seed-free programs: each cell of the restore table a search can miss, met on every
#: run for each manager and store the harness has. name -> (manager, keep, pin, proactive,
#: steps)
PROGRAMS: dict[str, tuple[str, int, int | None, bool, list[Step]]] = {
    "summary-restored": (SUMMARIZING, 2, None, False, _fold_twice()),
    "summary-pinned-restored": (SUMMARIZING, 2, 1, False, _fold_twice()),
    "summary-failed-restored": (
        SUMMARIZING,
        2,
        None,
        False,
        [*_fold_twice()[:2], turn([1], overflow=1, summary_fails=True), *_fold_twice()[3:]],
    ),
    # two folds of text alone with a restore after each: the second folds the first's
    # summary, which the store never held, so the count of stored messages folded is one
    # less than what it summarized. A count off by one brings back (or skips) the message
    # at the cut: here a prompt, which no repair of tool pairs can drop (after a tool
    # round the message there is a result, which strands' restore drops as an orphan)
    "summary-folds-twice-over-text": (
        SUMMARIZING,
        2,
        None,
        False,
        [*_text_fold(), RESTORE, *_text_fold(), RESTORE, turn([])],
    ),
    "summary-proactive-restored": (
        SUMMARIZING,
        2,
        None,
        True,
        [*_fold_twice()[:2], turn([1], full=1), *_fold_twice()[3:]],
    ),
    # a turn with a tool round, then an overflow at the next prompt: of five messages the
    # fold keeps three, the oldest of them a tool result (R5's cell)
    "summary-kept-opens-on-a-result": (
        SUMMARIZING,
        3,
        None,
        False,
        [turn([1]), turn([], overflow=0), RESTORE],
    ),
    # the cells of "a summarizing fold × the oldest message it must keep" the ci search
    # left at 0: keep 1 with a tool result newest (an overflow right after a tool round),
    # keep 3 opening on a prompt (two answered turns, then an overflow), keep 3 opening on
    # a call (a turn a provider error ended after its tool round, then an overflow)
    "summary-keeps-one-a-result": (SUMMARIZING, 1, None, False, [turn([1], overflow=1), RESTORE]),
    "summary-keeps-three-from-a-prompt": (
        SUMMARIZING,
        3,
        None,
        False,
        [turn([]), turn([]), turn([], overflow=0), RESTORE],
    ),
    "summary-keeps-three-from-a-call": (
        SUMMARIZING,
        3,
        None,
        False,
        [turn([1], error=1), turn([], overflow=0), RESTORE],
    ),
    # keep 4 opening on an answer (two answered turns, an overflow at the third prompt),
    # on a call (a turn with a tool round, then an overflow), on a result (a tool turn, a
    # prompt a provider error left unanswered, then an overflow)
    "summary-keeps-four-from-an-answer": (
        SUMMARIZING,
        4,
        None,
        False,
        [turn([]), turn([]), turn([], overflow=0), RESTORE],
    ),
    "summary-keeps-four-from-a-call": (
        SUMMARIZING,
        4,
        None,
        False,
        [turn([1]), turn([], overflow=0), RESTORE],
    ),
    "summary-keeps-four-from-a-result": (
        SUMMARIZING,
        4,
        None,
        False,
        [turn([1]), turn([], error=0), turn([], overflow=0), RESTORE],
    ),
    # a provider error after a tool round, then an overflow at the next prompt: of four
    # messages the fold keeps two, the oldest of them a tool result
    "summary-after-a-provider-error": (
        SUMMARIZING,
        2,
        None,
        False,
        [turn([1], error=1, writer=0), turn([], overflow=0), RESTORE, turn([1])],
    ),
    # a tool that asks the user stops the turn; the agent is restored while the call awaits
    # the answer, answered, and the turn goes on to an overflow (a fold or a trim with the
    # answered call's result just added), then a restore again
    "summary-asks-restored": (SUMMARIZING, 2, None, False, _ask_and_restore()),
    "window-asks-restored": (WINDOW, 3, None, False, _ask_and_restore()),
    # the first reduction comes before the conversation has as many messages as the
    # manager pins (an overflow at the first prompt, or of a short conversation that
    # cannot be folded): the messages that come after it, up to the count, are pinned too
    "summary-pins-more-than-it-held": (
        SUMMARIZING,
        1,
        4,
        False,
        [
            turn([]),
            turn([], overflow=0),
            turn([]),
            turn([]),
            turn([]),
            turn([], overflow=0),
            RESTORE,
            turn([]),
        ],
    ),  # fmt: skip
    "window-pins-more-than-it-held": (
        WINDOW,
        3,
        3,
        False,
        [turn([], overflow=0), turn([]), turn([]), turn([], overflow=0), RESTORE, turn([])],
    ),
    # a guardrail redacts a prompt, then the prompt of a turn whose first call overflowed
    # (the redaction comes with the retried call: the prompt was stored before it), and
    # the agent is restored
    "summary-redacted-restored": (
        SUMMARIZING,
        2,
        None,
        False,
        [turn([1], redact=True), turn([], overflow=0, redact=True), RESTORE, turn([1])],
    ),
    "window-redacted-restored": (
        WINDOW,
        3,
        None,
        False,
        [turn([1], redact=True), turn([], overflow=0, redact=True), RESTORE, turn([1])],
    ),
    # an agent built with messages of its own (its first session starts with them stored):
    # its first prompt follows them in the session, a reduction and a restore after that
    "summary-opens-with-its-own": (
        SUMMARIZING,
        2,
        None,
        False,
        [turn([1]), RESTORE, turn([1], overflow=1), RESTORE, turn([])],
    ),
    "window-opens-with-its-own": (
        WINDOW,
        3,
        None,
        False,
        [turn([1]), RESTORE, turn([1]), RESTORE, turn([])],
    ),
    # the agent's process dies while a tool runs, after a fold (or a trim) and a state write
    # in the same turn: the next agent holds what the last save had (the storage as the
    # death left it), and the conversation goes on from there, restored again
    "summary-dies-after-a-fold": (
        SUMMARIZING,
        2,
        None,
        False,
        [
            turn([1], writer=0),
            turn([1]),
            turn([1, 1], overflow=1, writer=0, dies=1),
            turn([1]),
            RESTORE,
        ],
    ),  # fmt: skip
    # the user's code writes the agent's state, then calls it, and the process dies in the
    # first tool: the write was saved with the prompt (a store that saves every message)
    "summary-user-writes-then-dies": (
        SUMMARIZING,
        2,
        None,
        False,
        [turn([1]), turn([1], user_writes=True, dies=0), turn([]), RESTORE],
    ),
    "window-user-writes-then-dies": (
        WINDOW,
        3,
        None,
        False,
        [turn([1]), turn([1], user_writes=True, dies=0), turn([]), RESTORE],
    ),
    "window-dies-after-a-trim": (
        WINDOW,
        3,
        None,
        False,
        [turn([1]), turn([1]), turn([1, 1], writer=0, dies=1), turn([1]), RESTORE],
    ),
    # a provider error ends a turn after its tool round; the user's code calls the agent
    # again with the very prompt object, and a guardrail redacts it: the agent holds it
    # twice, redacted both times, and so must the session
    "summary-retried-redacted": (
        SUMMARIZING,
        3,
        None,
        False,
        [turn([1], error=1), turn([1], retry=True, redact=True), RESTORE, turn([])],
    ),
    "window-retried-redacted": (
        WINDOW,
        8,
        None,
        False,
        [turn([1], error=1), turn([1], retry=True, redact=True), RESTORE, turn([])],
    ),
    "window-restored": (WINDOW, 3, None, False, _fold_twice()),
    "window-pinned-restored": (WINDOW, 3, 2, False, _fold_twice()),
}


#: the programs whose agent is built with messages of its own (``Settings.opening``): how many
OPENING: dict[str, int] = {"summary-opens-with-its-own": 2, "window-opens-with-its-own": 2}


def programs(adapter: RestoreAdapter) -> list[tuple[str, str]]:
    """Each program with each of the adapter's stores: (program, store)."""
    return [(name, store) for name in PROGRAMS for store in adapter.stores]


def run_program(name: str, store: str, adapter: RestoreAdapter, left_out: LeftOut = never) -> None:
    """Run one program on ``adapter`` with ``store`` (:class:`NotApplicable` where the
    harness lacks its manager, pins or proactive reduction)."""
    manager, keep, pin, proactive, steps = PROGRAMS[name]
    if manager not in adapter.managers:
        raise NotApplicable(f"{adapter.name} has no {manager} manager")
    if pin is not None and not adapter.pins:
        raise NotApplicable(f"{adapter.name} pins no message")
    if proactive and not adapter.proactive:
        raise NotApplicable(f"{adapter.name} reduces only on an overflow")
    if not adapter.asks and any(rule_name == "answer" for rule_name, _ in steps):
        raise NotApplicable(f"{adapter.name} has no tool that asks the user")
    if not adapter.redacts and any(drawn.get("redact") for _, drawn in steps):
        raise NotApplicable(f"{adapter.name}'s model redacts no prompt")
    if not getattr(adapter, "dies", False) and any(
        drawn.get("dies") is not None for _, drawn in steps
    ):
        raise NotApplicable(f"{adapter.name}'s agent is not made to die")
    if not getattr(adapter, "retries", False) and any(drawn.get("retry") for _, drawn in steps):
        raise NotApplicable(f"{adapter.name} is not called again with a prompt object")
    if not getattr(adapter, "user_state", False) and any(
        drawn.get("user_writes") for _, drawn in steps
    ):
        raise NotApplicable(f"{adapter.name}'s state is not written by the user's code")
    opening = OPENING.get(name, 0)
    if opening and not adapter.opens:
        raise NotApplicable(f"{adapter.name} is not built with messages of its own")
    machine: Any = make_machine(adapter, left_out)()  # its rules, called as a search calls them
    try:
        machine.setup(settings=Settings(manager, keep, 0.5, pin, store, proactive, opening))
        for rule_name, drawn in steps:
            getattr(machine, rule_name)(**drawn)
    finally:
        machine.teardown()
