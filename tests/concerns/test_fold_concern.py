"""The fold concern's shared lockstep (``ctxaudit/locksteps/fold.py``) and its programs
on a plain summarizing conversation written here from the properties alone (C1, S6,
S7: when it folds, what it keeps, what the summarizer is sent, a failed summary): they
hold on it as written, under both contracts and with the forms and kinds a harness may
lack; they fail on each planted break with the property it breaks; the shared suite
finds the adapter a target names."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, Phase, settings

from ctxaudit import shapes
from ctxaudit.concerns.fold import (
    ANY,
    BY_FUNCTION,
    BY_MODEL,
    CLAUSES,
    FRACTION,
    KINDS,
    MESSAGES,
    ONE,
    SUMMARY_DOWN,
    TOKENS,
    Contract,
    Message,
    Observed,
    Settings,
    Shown,
)
from ctxaudit.locksteps.fold import run_lockstep
from ctxaudit.locksteps.fold_programs import PROGRAMS, NotApplicable, run_program

#: the examples of one run: enough to fold, fail a summary and land on a threshold
QUICK = settings(
    max_examples=120, stateful_step_count=12, derandomize=True, database=None, deadline=None,
    suppress_health_check=list(HealthCheck),
)  # fmt: skip
#: whether a break fails, and on which property, is asked: the first failing example
#: answers it, unshrunk
FIRST_FAILURE = settings(QUICK, phases=[Phase.generate])

AT = Contract(inclusive=True, reports=True, quoted="the test's")
PAST = Contract(inclusive=False, reports=False, quoted="the test's")


@dataclasses.dataclass
class Chat:
    """A conversation that summarizes before a model call when its trigger holds: the
    oldest messages go to the summarizer, whose summary (a system message) replaces
    them; the newest are kept whole (a model message stays with the results of its
    calls, a result whose call is gone starts nothing)."""

    settings: Settings
    count: Callable[[str], int]
    contract: Contract
    breaks: frozenset[str]
    messages: list[Message] = dataclasses.field(default_factory=list)
    written: int = 0

    def append(self, message: Message) -> None:
        self.messages.append(message)

    def shown(self) -> list[Shown]:
        return [Shown(m.kind, m.id, m.text, m.calls, m.answers) for m in self.messages]

    def tokens(self, messages: list[Message]) -> int:
        return sum(self.count(m.text) for m in messages)

    def meets(self, value: float, threshold: float) -> bool:
        if self.contract.inclusive and "passes, not reaches" not in self.breaks:
            return value >= threshold
        return value > threshold

    def due(self) -> bool:
        if not self.messages:
            return False
        ai = [m for m in self.messages if m.kind == "ai"]
        reported = ai[-1].reported if ai and self.contract.reports else None
        if ai and ai[-1].by_other and "reads another provider's report" not in self.breaks:
            reported = None

        def holds(kind: str, threshold: float) -> bool:
            if kind == MESSAGES:
                return self.meets(len(self.messages), threshold)
            if kind == FRACTION:
                if self.settings.window is None:
                    return False
                threshold = math.floor(self.settings.window * threshold)
            count = self.tokens(self.messages)
            return self.meets(count, threshold) or (
                reported is not None and self.meets(reported, threshold)
            )

        return any(all(holds(k, v) for k, v in clause) for clause in self.settings.trigger)

    def cut(self) -> int:
        kind, amount = self.settings.keep
        n = len(self.messages)
        if kind == MESSAGES:
            start = max(n - int(amount), 0)
        else:
            budget = int(amount)
            if kind == FRACTION:
                assert self.settings.window is not None
                budget = max(1, math.floor(self.settings.window * amount))
            start = next((i for i in range(n) if self.tokens(self.messages[i:]) <= budget), n)
        start = min(start, n - 1)
        if start == 0:
            return 0
        while "nearest asker only" not in self.breaks:  # back to every kept result's call
            answered = {m.answers for m in self.messages[start:] if m.kind == "tool"}
            askers = [i for i in range(start) if answered & set(self.messages[i].calls)]
            if not askers:
                break
            start = askers[0]
        if "cut stays on an orphan" not in self.breaks:
            while start < n and self.messages[start].kind == "tool":
                start += 1
        return start

    def before_model(self, summarizer_fails: bool) -> Observed:
        cut = self.cut() if self.due() else 0
        if cut == 0:
            return Observed(False, None, None, None)
        sent = self.messages[: cut + ("sends one kept" in self.breaks)]
        prompt = "\n".join(m.text for m in sent)
        if summarizer_fails and "fabricates a summary" not in self.breaks:
            return Observed(False, prompt, f"RuntimeError: {SUMMARY_DOWN}", None)
        self.written += 1
        summary = f"SUMMARY-{self.written}"
        kept = [dataclasses.replace(m, reported=None) for m in self.messages[cut:]]
        if "keeps reports" in self.breaks:
            kept = self.messages[cut:]
        if "drops the oldest kept" in self.breaks and len(kept) > 1:
            kept = kept[1:]
        if "swaps the newest two" in self.breaks and len(kept) > 1:
            kept = [*kept[:-2], kept[-1], kept[-2]]
        self.messages = [Message("human", f"s{self.written}", summary), *kept]
        return Observed(True, prompt, None, summary)


@dataclasses.dataclass
class Adapter:
    contract: Contract
    breaks: frozenset[str] = frozenset()
    name: str = "the test's conversation"
    forms: tuple[str, ...] = (ONE, ANY, CLAUSES)
    trigger_kinds: tuple[str, ...] = KINDS
    keep_kinds: tuple[str, ...] = KINDS
    summarizers: tuple[str, ...] = (BY_MODEL, BY_FUNCTION)
    summary_kind: str = "human"

    def conversation(self, settings: Settings, count: Callable[[str], int]) -> Chat:
        return Chat(settings, count, self.contract, self.breaks)

    def spell(self, settings: Settings) -> str:
        return repr(settings)


@pytest.mark.parametrize("contract", [AT, PAST], ids=["reaches", "passes"])
def test_the_conversation_as_written_holds(contract: Contract) -> None:
    run_lockstep(Adapter(contract), settings=QUICK)


@pytest.mark.parametrize("contract", [AT, PAST], ids=["reaches", "passes"])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_each_program_holds_on_the_conversation_as_written(contract: Contract, name: str) -> None:
    run_program(name, Adapter(contract))


#: a harness with one token threshold and a kept tail of messages, summarized by its
#: model only (a harness's smallest configuration)
SMALL = {
    "forms": (ONE,),
    "trigger_kinds": (TOKENS,),
    "keep_kinds": (MESSAGES,),
    "summarizers": (BY_MODEL,),
}


def test_only_what_the_harness_takes_is_drawn_and_programs_say_what_it_lacks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A harness that takes less is drawn only what it takes (it would raise on more),
    and a program that needs more is not applicable, with the reason."""
    # its shape tables have fewer cells: a process drives one harness, this test two
    monkeypatch.setattr(shapes, "_tables", {})
    small = Adapter(AT, **SMALL)  # type: ignore[arg-type]

    def strict(settings: Settings, count: Callable[[str], int]) -> Chat:
        assert settings.form == ONE and settings.keep[0] == MESSAGES, settings
        assert settings.summarizer == BY_MODEL and settings.window is None, settings
        return Chat(settings, count, AT, frozenset())

    small.conversation = strict  # type: ignore[method-assign]
    run_lockstep(small, settings=QUICK)
    with pytest.raises(NotApplicable, match="takes no the trigger form 'a list'"):
        run_program("clause_that_fails_does_not_stop_the_next[tokens_then_messages]", small)
    with pytest.raises(NotApplicable, match="a summarizer function"):
        run_program("summarizer_function_is_sent_exactly_the_folded_messages", small)


def test_a_form_no_lockstep_knows_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown or no forms"):
        run_lockstep(Adapter(AT, forms=("any of three",)), settings=QUICK)


def suite(adapter: Adapter) -> None:
    """The concern's suite on ``adapter``: the lockstep, a short search, then every
    program."""
    run_lockstep(adapter, settings=FIRST_FAILURE)
    for name in PROGRAMS:
        run_program(name, adapter)


@pytest.mark.parametrize(
    ("brk", "prop"),
    [
        ("passes, not reaches", "C1"),  # under a contract of "reaches"
        ("nearest asker only", "C1"),  # F3: a kept result whose call was summarized
        ("cut stays on an orphan", "C1"),  # the tail starts with a result nobody asked for
        ("sends one kept", "S6"),  # F2: the summarizer sent a message that is kept
        ("drops the oldest kept", "S6"),  # F2: removed without being summarized
        ("swaps the newest two", "C1/S6"),  # F1: what follows the summary is not the end
        ("fabricates a summary", "S7"),  # the failed summary folds anyway
        ("reads another provider's report", "C1"),  # it counts nothing of this window
    ],
)
def test_each_planted_break_fails_the_suite_with_its_property(brk: str, prop: str) -> None:
    """The lockstep's invariants, which do not trust the model, see a break of order, of
    what was sent or kept whole first; the model comparison sees the rest; where this
    short search misses a break, a program catches it. Each failure opens with the
    properties it breaks."""
    with pytest.raises(AssertionError) as failed:
        suite(Adapter(AT, frozenset({brk})))
    # the first failing example may break another property too (a dropped model
    # message orphans its kept result: S6/C1)
    opens = str(failed.value).split(":")[0].split("/")
    assert set(prop.split("/")) <= set(opens), failed.value


def test_a_report_read_after_the_fold_that_outdated_it_fails_its_program() -> None:
    """A kept answer's report, about a prompt the fold removed, read as the
    conversation's count refolds (langchain's LC-STALE-REPORT-REFOLDS). The search
    reaches it only now and then (its first failing example under 300 of these examples,
    not under 120), so the concern's program reaches it every time."""
    name = "report_made_before_a_fold_is_not_read_after_it"
    run_program(name, Adapter(AT))
    with pytest.raises(AssertionError, match="^C1: folded where the trigger"):
        run_program(name, Adapter(AT, frozenset({"keeps reports"})))


def test_the_shared_suite_drives_the_adapter_a_target_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A target that names a ``fold`` adapter gets the fold lockstep and its programs from
    the shared suites, with no test of its own."""
    from types import SimpleNamespace

    from ctxaudit import targets
    from ctxaudit.targets import concern_suites

    assert concern_suites.suites_for({"fold": "x:y"}) == (
        str(concern_suites.HERE / "test_fold.py"),
    )
    kind = SimpleNamespace(concerns={"fold": f"{__name__}:_factory"}, resolve=str)
    monkeypatch.setattr(targets, "get", lambda name: kind)
    config = SimpleNamespace(getoption=lambda name: "toy" if "target" in name else "1.0")
    built = concern_suites.adapter(config, "fold")  # type: ignore[arg-type]
    assert isinstance(built, Adapter) and built.name == "the conversation of 1.0"


def _factory(version: str) -> Adapter:
    return Adapter(AT, name=f"the conversation of {version}")
