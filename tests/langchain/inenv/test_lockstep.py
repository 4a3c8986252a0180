"""C1, S6 and S7 on langchain's ``SummarizationMiddleware``: the release and the model
(``model/fold.py``), driven in lockstep.

One :class:`FoldMachine` runs an agent's conversation under a drawn configuration
(trigger: a threshold, a list of them, none, or, where the release documents them,
clauses; keep: messages, tokens or a fraction of the model's window; the summaries
written by the model or, where the release takes one, a ``summarizer`` function):
users speak, the model answers with text or with parallel tool calls (with or without
a provider report of its tokens) whose results come back at once, or later: after
other messages, out of order, interleaved with another model message's results, or
not before a fold (still pending); a tool result arrives whose call is not in the
conversation, a run opens with any role, a model call fails, the summarizer fails.
Before each model call both sides decide whether to fold, and after it the
conversations are compared message by message: what was kept, that one summary
replaced everything before the kept tail and the summarizer was sent exactly that
(C1, S6), and that a failed summary fails the step and changes nothing (S7). Beside
the model, every step is held to the fold's invariants (F1-F4,
``ctxaudit/invariants/fold.py``), which do not trust the model: order kept, the
summarizer sent exactly what was removed, no kept result without its call, no kept
call without its result. The documented contract is the model's parameters
(:meth:`Config.model_trigger`), never a branch.

Counts rarely land on a threshold by chance, so a user message can be sized to bring the
conversation's count one below, at or one above a token or fraction threshold of the
trigger, and a provider report can be drawn the same way. The fixed programs at the end
run the same machine without Hypothesis: each threshold's "reaches or exceeds" on every
run, and the boundaries a drawing reaches only now and then or never (a window so small
that a fraction of it rounds to no token, a conversation that opens with a tool result,
a clause that fails before one that holds, a newest message larger than the tail,
results answered late or interleaved across model messages).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from ctxaudit import shapes
from ctxaudit.invariants.fold import check_fold
from ctxaudit.targets.langchain import findings
from ctxaudit.targets.langchain.adapter import (
    SUMMARY_DOWN,
    Agent,
    Config,
    ai,
    documents_clauses,
    entry,
    human,
    model_count,
    model_view,
    takes_summarizer,
    tool,
    view,
)
from model.fold import Message, fold, unit_start
from tests.fold_shapes import FEATURES, PICKS, features, text
from tests.langchain.inenv.conftest import VERSION
from tests.outside_hypothesis import event as _event
from tests.outside_hypothesis import note as _note

pytestmark = pytest.mark.properties("C1", "S6", "S7")

CLAUSES = documents_clauses()
SUMMARIZERS = ("model", "function") if takes_summarizer() else ("model",)
WINDOWS = (None, 240, 400)
#: a summary call fails now and then (one step in four)
FAILS = st.integers(0, 3).map(lambda n: n == 0)
FRACTIONS = (0.05, 0.1, 0.25, 0.3, 0.5, 0.75, 0.9, 1.0)
#: where a sized message or a report lands: one below, at or one above a threshold
OFFSETS = st.sampled_from((-1, 0, 1))
#: a provider report: none, any count, or (which threshold, offset) aimed at one
REPORTS = st.none() | st.integers(1, 600) | st.tuples(st.integers(0, 5), OFFSETS)


#: how many of a model message's calls are left waiting, to be answered later
LATE = st.sampled_from((0, 0, 0, 1, 2, 3))
#: how a run opens: the user, or what is left of an edited or restored history
OPENINGS = st.sampled_from(("human", "human", "ai", "tool"))


#: the shape coverage this lockstep reports (ctxaudit/shapes.py), counted over the steps
#: outside the known findings' regions
HOLDS = "fold: what the conversation holds × what the step did"
SETTINGS = "fold: the trigger × the kept tail, on steps that folded"
shapes.declare(
    HOLDS, ("the conversation holds", FEATURES), ("the step", ("no fold", "fold", "failed summary"))
)
shapes.declare(
    SETTINGS,
    # an empty list never folds; clauses only where the release documents them
    ("trigger", ("one threshold", "a list", *(("clauses",) if CLAUSES else ()))),
    ("keep", ("messages", "tokens", "fraction")),
)


def trigger_form(config: Config) -> str:
    if config.single():
        return "one threshold"
    return "clauses" if any(isinstance(t, dict) for t in config.trigger) else "a list"


def splits_units(messages: tuple[Message, ...], raw: int) -> bool:
    """Moving the cut at ``raw`` back to the nearest model message that asked for one of
    the results it lands on (if it lands on any) still keeps a result whose call is
    before the cut: results that came back late, or interleaved across model messages."""
    asker = {c: i for i, m in enumerate(messages) for c in m.calls}
    start, end = raw, raw
    while end < len(messages) and messages[end].kind == "tool":
        end += 1
    nearest = [asker[m.answers] for m in messages[raw:end] if asker.get(m.answers, raw) < raw]
    if nearest:
        start = max(nearest)
    return any(asker.get(m.answers, start) < start for m in messages[start:])


@st.composite
def configs(draw: st.DrawFn) -> Config:
    window = draw(st.sampled_from(WINDOWS))
    kinds = ["messages", "tokens"] + (["fraction"] if window else [])

    def threshold(kind: str) -> float:
        if kind == "messages":
            return draw(st.integers(2, 14))
        if kind == "tokens":
            return draw(st.integers(10, 300))
        return draw(st.sampled_from(FRACTIONS))

    def one() -> tuple[str, float]:
        kind = draw(st.sampled_from(kinds))
        return kind, threshold(kind)

    form = draw(st.sampled_from(["one", "list", "clauses"] if CLAUSES else ["one", "list"]))
    trigger: tuple[str, float] | tuple[tuple[str, float] | dict[str, float], ...]
    if form == "one":
        trigger = one()
    elif form == "list":  # an empty list: no clause, never a fold
        trigger = tuple(one() for _ in range(draw(st.integers(0, 3))))
    else:
        clauses = []
        for _ in range(draw(st.integers(1, 2))):
            chosen = draw(st.lists(st.sampled_from(kinds), min_size=1, max_size=2, unique=True))
            clauses.append({k: threshold(k) for k in chosen})
        trigger = tuple(clauses)
    keep_kind = draw(st.sampled_from(kinds))
    if keep_kind == "messages":
        keep: tuple[str, float] = ("messages", draw(st.integers(1, 6)))
    elif keep_kind == "tokens":
        keep = ("tokens", draw(st.integers(5, 150)))
    else:
        keep = ("fraction", draw(st.sampled_from(FRACTIONS[:5])))
    return Config(trigger, keep, window, draw(st.sampled_from(SUMMARIZERS)))


class FoldMachine(RuleBasedStateMachine):
    @initialize(config=configs(), size=st.integers(1, 40), opening=OPENINGS)
    def setup(self, config: Config, size: int, opening: str) -> None:
        self.start(config)
        if opening == "human":  # a run starts with what the user says
            self.user(size)
        elif opening == "ai":
            id = self.new_id("a")
            self.add(Message("ai", id, text(id, size)))
        else:
            self.orphaned_result(size)

    def start(self, config: Config) -> None:
        _note(f"langchain {VERSION}: SummarizationMiddleware(fake, **{config.arguments()!r})")
        self.config = config
        self.agent = Agent(config)
        self.trigger = config.model_trigger(reports=CLAUSES)
        self.keep = config.model_keep()
        self.model: tuple[Message, ...] = ()
        self.reports: dict[str, int] = {}  # every report drawn, by its message's id
        self.pending: list[str] = []  # calls asked for and not answered yet, oldest first
        self.ids = itertools.count()

    def new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self.ids)}"

    def add(self, message: Message) -> None:
        self.model = (*self.model, message)
        if message.kind == "human":
            self.agent.append(human(message.id, message.text))
        elif message.kind == "ai":
            self.agent.append(ai(message.id, message.text, message.calls, message.reported))
        else:
            assert message.answers is not None
            self.agent.append(tool(message.id, message.text, message.answers))
        self.compare()

    def compare(self) -> None:
        got = [view(m) for m in self.agent.messages]
        want = [model_view(m) for m in self.model]
        assert got == want, f"the conversation differs from the model's:\n{got}\n!=\n{want}"

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
        """The counts the trigger's token and fraction thresholds sit at (the fraction's
        as ``ContextFraction`` reads it: that share of the window, rounded down)."""
        out: list[int] = []
        for clause in self.trigger.clauses:
            for kind, value in clause.items():
                if kind == "tokens":
                    out.append(int(value))
                elif kind == "fraction" and self.config.window is not None:
                    out.append(math.floor(self.config.window * value))
        return out

    @rule(pick=st.integers(0, 5), offset=OFFSETS)
    def user_at_threshold(self, pick: int, offset: int) -> None:
        """The user says just enough to bring the count one below, at or one above a
        threshold of the trigger (when it is not past it already); the next model call
        meets it."""
        aims = self.token_thresholds()
        if aims:
            self.user(max(aims[pick % len(aims)] + offset - model_count(self.model), 1))

    @rule(
        summarizer_fails=FAILS,
        calls=st.integers(0, 3),
        size=st.integers(1, 40),
        reported=REPORTS,
        late=LATE,
    )
    def model_call(
        self,
        summarizer_fails: bool,
        calls: int,
        size: int,
        reported: int | tuple[int, int] | None,
        late: int = 0,
    ) -> None:
        """Before the model call the middleware may fold; then the model answers, with
        parallel tool calls, and maybe a report of its tokens (one aimed at a threshold:
        a pick and an offset). The results of all but its ``late`` last calls come back
        at once; those wait for :meth:`answer`."""
        if not self.before_model(summarizer_fails):
            return  # the step failed: the run ends without a model call
        if isinstance(reported, tuple):
            aims = self.token_thresholds()
            pick, offset = reported
            reported = max(aims[pick % len(aims)] + offset, 1) if aims else None
        id = self.new_id("a")
        call_ids = tuple(f"{id}c{i}" for i in range(calls))
        if reported is not None:
            self.reports[id] = reported
        self.add(Message("ai", id, text(id, size), calls=call_ids, reported=reported))
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
        """The middleware runs, then the model call fails (an outage): no answer is added."""
        self.before_model(summarizer_fails)

    def before_model(self, summarizer_fails: bool) -> bool:
        """One ``before_model`` on both sides; whether the step went on to the model."""
        before = self.model
        fires = self.trigger.fires(before, model_count, self.config.window)
        cut = self.keep.cut(before, model_count) if fires else 0
        raw = self.keep.tail(before, model_count)
        restored = tuple(replace(m, reported=self.reports.get(m.id)) for m in before)
        step = findings.Step(
            raw_cut=raw,
            cut=cut,
            fires=fires and cut > 0,
            fires_on_stale=self.trigger.fires(restored, model_count, self.config.window)
            and self.keep.cut(restored, model_count) > 0,
            summarizer_fails=summarizer_fails,
            in_group=raw < len(before)
            and before[raw].kind == "tool"
            and unit_start(before, raw) < raw,
            splits_units=splits_units(before, raw),
        )
        # a statistic (--hypothesis-show-statistics): how often a boundary decides a step
        if step.fires and not replace(self.trigger, inclusive=False).fires(
            before, model_count, self.config.window
        ):
            _event("the trigger holds only by reaching a threshold")
        was = [entry(m) for m in self.agent.messages]
        observed = self.agent.before_model(summarizer_fails=summarizer_fails)
        prompt = observed.prompt or ""
        broken = check_fold(
            was,
            [entry(m) for m in self.agent.messages],
            observed.folded,
            sent={e.id for e in was if f"[{e.id}]" in prompt},
            traceable={m.id for m in before if f"[{m.id}]" in m.text},
        )
        step = replace(step, orphaned=any(b.startswith("F3") for b in broken))
        left_out = findings.left_out(VERSION, step)
        if left_out is not None:
            _event(f"left out: {left_out}")
            self.adopt(observed.folded)
            return observed.raised is None
        assert not broken, "the fold broke its invariants:\n" + "\n".join(broken)
        did = "no fold" if not step.fires else "failed summary" if summarizer_fails else "fold"
        for feature in features(before):
            shapes.reached(HOLDS, feature, did)
        if did == "fold":
            shapes.reached(SETTINGS, trigger_form(self.config), self.config.keep[0])
        if not step.fires:
            assert observed.raised is None, f"no fold was due, yet it raised {observed.raised!r}"
            assert not observed.folded, (
                f"folded where the trigger {self.trigger} does not hold "
                f"({model_count(before)} tokens, {len(before)} messages)"
            )
            assert observed.prompt is None, "the summarizer was called without a fold"
            self.compare()
            return True
        folded, tail = before[:cut], before[cut:]
        if summarizer_fails:
            assert observed.raised is not None and SUMMARY_DOWN in str(observed.raised), (
                f"the summary failed, yet the step did not fail (raised {observed.raised!r})"
            )
            self.compare()  # nothing changed
            return False
        assert observed.raised is None, f"the fold raised {observed.raised!r}"
        assert observed.folded, (
            f"no fold where the trigger {self.trigger} holds "
            f"({model_count(before)} tokens, {len(before)} messages) and keep "
            f"{self.keep} leaves {cut} to fold"
        )
        _event("folded")
        first = self.agent.messages[0]
        written = f"SUMMARY-{len(self.agent.summarizer.prompts)}"
        assert first.type == "human" and written in str(first.content), (
            f"the first message is not the new summary: {view(first)}"
        )
        missing = [m.id for m in folded if f"[{m.id}]" in m.text and f"[{m.id}]" not in prompt]
        leaked = [m.id for m in tail if f"[{m.id}]" in prompt]
        assert not missing and not leaked, (
            f"the summarizer was not sent exactly the folded messages: missing {missing}, "
            f"sent from the kept tail {leaked}"
        )
        summary = Message("summary", str(first.id), str(first.content))
        self.model = fold(before, cut, summary)
        self.compare()
        return True

    def adopt(self, folded: bool) -> None:
        """After a step in a known finding's region, the model takes the release's
        conversation as it is (kept messages lose their reports when it folded)."""
        by_id = {m.id: m for m in self.model}
        adopted = []
        for lc in self.agent.messages:
            kind, body, calls, answers = view(lc)
            known = by_id.get(str(lc.id))
            if known is None:
                adopted.append(Message("summary", str(lc.id), body))
            else:
                adopted.append(replace(known, reported=None) if folded else known)
        self.model = tuple(adopted)
        self.compare()


TestFold = FoldMachine.TestCase


# Fixed programs: the machine's own steps and checks, in a fixed order, seed-free.


def program(config: Config) -> FoldMachine:
    """The machine under ``config`` with an empty conversation, for a fixed program."""
    machine = FoldMachine()
    machine.start(config)
    return machine


@pytest.mark.parametrize(
    "trigger, window",
    [(("tokens", 20), None), (("fraction", 0.1), 200)],
    ids=["tokens", "fraction"],
)
def test_a_threshold_is_met_by_reaching_it(trigger: tuple[str, float], window: int | None) -> None:
    """A token threshold of 20 (given, or a tenth of a 200-token window): 19 tokens in
    two messages do not fold, 20 do ("reaches or exceeds")."""
    m = program(Config(trigger, ("messages", 1), window))
    m.user(10)
    m.user(9)
    m.failed_model_call(summarizer_fails=False)
    assert [x.kind for x in m.model] == ["human", "human"]
    m.user(1)  # "[h2]": one token
    assert model_count(m.model) == 20
    m.failed_model_call(summarizer_fails=False)
    assert [x.kind for x in m.model] == ["summary", "human"]


def test_a_report_meets_a_threshold_by_reaching_it() -> None:
    """Where the release documents reports (1.3.5 on), a report of 49 tokens under a
    threshold of 50 does not fold a 10-token conversation, a report of 50 does."""
    m = program(Config(("tokens", 50), ("messages", 1), None))
    m.user(5)
    m.model_call(summarizer_fails=False, calls=0, size=5, reported=49)
    m.failed_model_call(summarizer_fails=False)
    assert [x.kind for x in m.model] == ["human", "ai"]
    m.model_call(summarizer_fails=False, calls=0, size=5, reported=50)
    m.failed_model_call(summarizer_fails=False)
    want = ["summary", "ai"] if CLAUSES else ["human", "ai", "ai"]
    assert [x.kind for x in m.model] == want


def test_keep_fraction_under_one_token_keeps_a_one_token_tail() -> None:
    """``keep=("fraction", 0.05)`` of a 10-token window is half a token, and the kept
    tail is the longest suffix of at most one token (the model's ``Keep`` amount is at
    least 1): the answer with no text and the one-token question stay, only the first
    question is folded."""
    m = program(Config(("messages", 3), ("fraction", 0.05), 10))
    m.user(5)
    m.model_call(summarizer_fails=False, calls=0, size=0, reported=None)
    m.user(1)  # "[h2]": one token
    assert [model_count([x]) for x in m.model] == [5, 0, 1]
    m.model_call(summarizer_fails=False, calls=0, size=5, reported=None)
    assert [x.kind for x in m.model] == ["summary", "ai", "human", "ai"]


def leading_tool_result(config: Config) -> FoldMachine:
    """A conversation that opens with a tool result (what came before it is gone), then
    a question, 10 tokens in all: exactly what ``config`` keeps."""
    m = program(config)
    id = m.new_id("t")
    m.add(Message("tool", id, text(id, 5), answers="gone"))
    m.user(5)
    assert model_count(m.model) == 10
    return m


def test_a_tail_of_exactly_keep_messages_is_not_folded() -> None:
    """Two messages, ``keep=("messages", 2)``: everything is kept, even when the first is
    a tool result (nothing to fold, so nothing to move the cut past)."""
    m = leading_tool_result(Config(("messages", 2), ("messages", 2), None))
    m.failed_model_call(summarizer_fails=False)
    assert [x.kind for x in m.model] == ["tool", "human"]


def test_a_conversation_of_exactly_keep_tokens_is_not_folded() -> None:
    """10 tokens, ``keep=("fraction", 0.1)`` of a 100-token window (10 tokens): the whole
    conversation fits the tail, even when it opens with a tool result."""
    m = leading_tool_result(Config(("messages", 2), ("fraction", 0.1), 100))
    m.failed_model_call(summarizer_fails=False)
    assert [x.kind for x in m.model] == ["tool", "human"]


@pytest.mark.parametrize(
    "trigger",
    [(("tokens", 100), ("messages", 3)), (("messages", 10), ("tokens", 6))],
    ids=["tokens-then-messages", "messages-then-tokens"],
)
def test_a_clause_that_fails_does_not_stop_the_next(trigger: tuple[tuple[str, float], ...]) -> None:
    """A list of two clauses whose first does not hold: three 2-token messages fold, on
    the second clause (three messages, or six tokens); two do not."""
    m = program(Config(trigger, ("messages", 1), None))
    m.user(2)
    m.user(2)
    m.failed_model_call(summarizer_fails=False)
    assert [x.kind for x in m.model] == ["human", "human"]
    m.user(2)
    m.failed_model_call(summarizer_fails=False)
    assert [x.kind for x in m.model] == ["summary", "human"]


def test_an_empty_trigger_never_folds() -> None:
    """``trigger=[]``: no clause, so no fold, however long the conversation."""
    m = program(Config((), ("messages", 1), None))
    for _ in range(20):
        m.user(40)
    m.failed_model_call(summarizer_fails=False)
    assert len(m.model) == 20 and m.model[0].kind == "human"


def test_a_newest_message_larger_than_the_tail_is_kept_alone() -> None:
    """``keep=("tokens", 5)``: of two 10-token messages none fits the tail, and the newest
    is kept all the same; one message is never folded."""
    m = program(Config(("messages", 1), ("tokens", 5), None))
    m.user(10)
    m.failed_model_call(summarizer_fails=False)
    assert [x.kind for x in m.model] == ["human"]
    m.user(10)
    m.failed_model_call(summarizer_fails=False)
    assert [x.kind for x in m.model] == ["summary", "human"]


def test_a_cut_on_an_orphaned_result_moves_past_it() -> None:
    """``keep=("messages", 2)`` lands on a tool result whose call is not in the
    conversation, after a model message that asked for another tool: the cut moves
    forward past the orphan (never back to that model message), and only the newest
    question is kept."""
    m = program(Config(("messages", 6), ("messages", 2), None))
    m.user(3)
    m.model_call(summarizer_fails=False, calls=1, size=3, reported=None)
    m.user(3)
    m.orphaned_result(3)
    m.user(3)
    assert [x.kind for x in m.model] == ["human", "ai", "tool", "human", "tool", "human"]
    m.failed_model_call(summarizer_fails=False)
    assert [x.kind for x in m.model] == ["summary", "human"]


@pytest.mark.skipif(not takes_summarizer(), reason="the release takes no summarizer (before 1.5)")
def test_a_summarizer_function_is_sent_exactly_the_folded_messages() -> None:
    """``summarizer=`` a function: it writes the summary of exactly what is folded, and
    when it raises, the step fails and the conversation is as it was."""
    m = program(Config(("messages", 3), ("messages", 1), None, "function"))
    for _ in range(3):
        m.user(3)
    m.failed_model_call(summarizer_fails=True)
    assert [x.kind for x in m.model] == ["human", "human", "human"]
    m.failed_model_call(summarizer_fails=False)
    assert [x.kind for x in m.model] == ["summary", "human"]


def test_an_orphaned_result_as_the_newest_message_is_folded() -> None:
    """``keep=("messages", 1)`` lands on the newest message, a tool result whose call is
    not in the conversation: it moves past it to the end, and everything is folded."""
    m = program(Config(("messages", 3), ("messages", 1), None))
    m.user(3)
    m.user(3)
    m.orphaned_result(3)
    m.failed_model_call(summarizer_fails=False)
    assert [x.kind for x in m.model] == ["summary"]


def unless_registered(finding: str, got: list[str], want: list[str]) -> None:
    """``got == want``, where the release does not have ``finding`` registered (where it
    has, the machine left the step out and took the release's conversation)."""
    if finding not in {f.id for f in findings.registered(VERSION)}:
        assert got == want


def test_a_result_answered_late_keeps_its_call() -> None:
    """A call answered after the user spoke again, ``keep=("messages", 2)``: the cut lands
    on the user's message and moves back to the call, so its result is not kept alone."""
    m = program(Config(("messages", 4), ("messages", 2), None))
    m.user(3)
    m.model_call(summarizer_fails=False, calls=1, size=3, reported=None, late=1)
    m.user(3)
    m.answer([0], 3)
    m.failed_model_call(summarizer_fails=False)
    got = [x.kind for x in m.model]
    unless_registered("LC-FOLD-KEEPS-ORPHAN-RESULT", got, ["summary", "ai", "human", "tool"])


def test_interleaved_results_keep_both_calls() -> None:
    """Two model messages ask for a tool each, and both results come back after the
    second, the first's first: keeping two messages keeps both askers."""
    m = program(Config(("messages", 5), ("messages", 2), None))
    m.user(3)
    m.model_call(summarizer_fails=False, calls=1, size=3, reported=None, late=1)
    m.model_call(summarizer_fails=False, calls=1, size=3, reported=None, late=1)
    m.answer([0, 0], 3)
    m.failed_model_call(summarizer_fails=False)
    got = [x.kind for x in m.model]
    unless_registered("LC-FOLD-KEEPS-ORPHAN-RESULT", got, ["summary", "ai", "ai", "tool", "tool"])


def test_a_call_pending_at_a_fold_is_summarized_and_its_late_result_moved_past() -> None:
    """A run that opens with a model message whose call is still pending when the fold
    summarizes it; its result, arriving after, answers a call that is gone, and the
    next fold's cut on it moves past it."""
    m = program(Config(("messages", 3), ("messages", 1), None))
    id = m.new_id("a")
    m.add(Message("ai", id, text(id, 3), calls=(f"{id}c0",)))
    m.pending.append(f"{id}c0")
    m.user(3)
    m.user(3)
    m.failed_model_call(summarizer_fails=False)
    assert [x.kind for x in m.model] == ["summary", "human"]
    m.answer([0], 3)
    m.user(3)
    m.failed_model_call(summarizer_fails=False)
    assert [x.kind for x in m.model] == ["summary", "human"]


FORMS = {
    "one threshold": ("tokens", 10),
    "a list": (("messages", 20), ("tokens", 10)),
    "clauses": ({"messages": 2, "tokens": 10},),
}
TAILS = {"messages": (("messages", 1), None), "tokens": (("tokens", 5), None)}
TAILS["fraction"] = (("fraction", 0.05), 100)


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("tail", list(TAILS))
def test_every_trigger_form_folds_to_every_kind_of_tail(form: str, tail: str) -> None:
    """Each form of trigger (one threshold, a list, where documented a clause of two) at
    10 tokens, with a tail of one message or at most 5 tokens (given, or a twentieth of
    a 100-token window): one 6-token question does not fold, two do, and only the
    newest is kept."""
    if form == "clauses" and not CLAUSES:
        pytest.skip("the release documents no TriggerClause (before 1.3.5)")
    keep, window = TAILS[tail]
    m = program(Config(FORMS[form], keep, window))  # type: ignore[arg-type]
    m.user(6)
    m.failed_model_call(summarizer_fails=False)
    assert [x.kind for x in m.model] == ["human"]
    m.user(6)
    m.failed_model_call(summarizer_fails=False)
    assert [x.kind for x in m.model] == ["summary", "human"]


def test_a_run_that_opens_with_a_model_message_keeps_it_when_the_summary_fails() -> None:
    """What is left of a restored history opens with a model message; the fold's summary
    call fails, the step fails, and the conversation is as it was."""
    m = program(Config(("messages", 2), ("messages", 1), None))
    id = m.new_id("a")
    m.add(Message("ai", id, text(id, 3)))
    m.user(3)
    m.failed_model_call(summarizer_fails=True)
    got = [x.kind for x in m.model]
    unless_registered("LC-SUMMARY-FAILURE-FABRICATED", got, ["ai", "human"])


def late_or_interleaved(shape: str, trigger: int) -> FoldMachine:
    """A result answered late (after the user spoke again) or two model messages' results
    interleaved, under a message trigger of ``trigger`` and a tail of two messages."""
    m = program(Config(("messages", trigger), ("messages", 2), None))
    m.user(3)
    m.model_call(summarizer_fails=False, calls=1, size=3, reported=None, late=1)
    if shape == "late":
        m.user(3)
        m.answer([0], 3)
    else:
        m.model_call(summarizer_fails=False, calls=1, size=3, reported=None, late=1)
        m.answer([0, 0], 3)
    return m


@pytest.mark.parametrize("shape", ["late", "interleaved"])
def test_late_and_interleaved_results_when_no_fold_is_due_or_the_summary_fails(
    shape: str,
) -> None:
    """The same conversations under a trigger they do not meet (nothing changes), and
    under one they meet with a summary call that fails (the step fails, nothing changes)."""
    m = late_or_interleaved(shape, 10)
    before = [x.kind for x in m.model]
    m.failed_model_call(summarizer_fails=False)
    assert [x.kind for x in m.model] == before
    m = late_or_interleaved(shape, 4)
    m.failed_model_call(summarizer_fails=True)
    unless_registered("LC-SUMMARY-FAILURE-FABRICATED", [x.kind for x in m.model], before)
