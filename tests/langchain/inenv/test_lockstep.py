"""C1, S6 and S7 on langchain's ``SummarizationMiddleware``: the release and the model
(``model/fold.py``), driven in lockstep.

One :class:`FoldMachine` runs an agent's conversation under a drawn configuration
(trigger: a threshold, a list of them, or, where the release documents them, clauses;
keep: messages, tokens or a fraction of the model's window): users speak, the model
answers with text or with parallel tool calls and their results (with or without a
provider report of its tokens), a model call fails, the summarizer fails. Before each
model call both sides decide whether to fold, and after it the conversations are
compared message by message: what was kept, that one summary replaced everything
before the kept tail and the summarizer was sent exactly that (C1, S6), and that a
failed summary fails the step and changes nothing (S7). The documented contract is
the model's parameters (:meth:`Config.model_trigger`), never a branch.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
from hypothesis import event, note
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from ctxaudit.targets.langchain import findings
from ctxaudit.targets.langchain.adapter import (
    SUMMARY_DOWN,
    Agent,
    Config,
    ai,
    documents_clauses,
    human,
    model_count,
    model_view,
    tool,
    view,
)
from model.fold import Message, fold
from tests.langchain.inenv.conftest import VERSION

pytestmark = pytest.mark.properties("C1", "S6", "S7")

CLAUSES = documents_clauses()
WINDOWS = (None, 240, 400)
#: a summary call fails now and then (one step in four)
FAILS = st.integers(0, 3).map(lambda n: n == 0)
FRACTIONS = (0.05, 0.1, 0.25, 0.3, 0.5, 0.75, 0.9, 1.0)


def text(id: str, size: int) -> str:
    """A message's text: its id in brackets (found again in the summarizer's prompt),
    padded to ``size`` tokens."""
    head = f"[{id}]"
    return head + "w" * max(0, 4 * size - len(head))


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
    elif form == "list":
        trigger = tuple(one() for _ in range(draw(st.integers(1, 3))))
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
    return Config(trigger, keep, window)


class FoldMachine(RuleBasedStateMachine):
    @initialize(config=configs(), size=st.integers(1, 40))
    def setup(self, config: Config, size: int) -> None:
        note(f"langchain {VERSION}: SummarizationMiddleware(fake, **{config.arguments()!r})")
        self.config = config
        self.agent = Agent(config)
        self.trigger = config.model_trigger(reports=CLAUSES)
        self.keep = config.model_keep()
        self.model: tuple[Message, ...] = ()
        self.reports: dict[str, int] = {}  # every report drawn, by its message's id
        self.ids = itertools.count()
        self.user(size)  # a run starts with what the user says

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

    @rule(
        summarizer_fails=FAILS,
        calls=st.integers(0, 3),
        size=st.integers(1, 40),
        reported=st.none() | st.integers(1, 600),
    )
    def model_call(
        self, summarizer_fails: bool, calls: int, size: int, reported: int | None
    ) -> None:
        """Before the model call the middleware may fold; then the model answers, with
        parallel tool calls whose results come back before the next call."""
        if not self.before_model(summarizer_fails):
            return  # the step failed: the run ends without a model call
        id = self.new_id("a")
        call_ids = tuple(f"{id}c{i}" for i in range(calls))
        if reported is not None:
            self.reports[id] = reported
        self.add(Message("ai", id, text(id, size), calls=call_ids, reported=reported))
        for call in call_ids:
            tid = self.new_id("t")
            self.add(Message("tool", tid, text(tid, size // 2 + 1), answers=call))

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
            in_group=raw < len(before) and before[raw].kind == "tool",
        )
        observed = self.agent.before_model(summarizer_fails=summarizer_fails)
        left_out = findings.left_out(VERSION, step)
        if left_out is not None:
            event(f"left out: {left_out}")
            self.adopt(observed.folded)
            return observed.raised is None
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
        event("folded")
        first = self.agent.messages[0]
        written = f"SUMMARY-{len(self.agent.summarizer.prompts)}"
        assert first.type == "human" and written in str(first.content), (
            f"the first message is not the new summary: {view(first)}"
        )
        prompt = observed.prompt or ""
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
