"""langchain findings: where a release breaks a property. The one reviewed place.

Each is a :class:`~ctxaudit.targets.base.ReleaseFinding` over the lockstep's step
(:class:`Step`): the property, the releases, the doc line it breaks, the narrowest region
where it shows and the regression test that asserts it still reproduces.

``CTXAUDIT_FINDINGS`` overrides the registry for one run (the audit uses it): ``all``
or a comma-separated list of ids (``none``: none).
"""

from __future__ import annotations

from ctxaudit.concerns.fold import Step
from ctxaudit.targets.base import ReleaseFinding, first_in_region, never, registered_for

NAME = "langchain"
FINDINGS_TESTS = "tests/langchain/inenv/test_findings.py"


Finding = ReleaseFinding[Step]


def _test(name: str) -> str:
    return f"{FINDINGS_TESTS}::{name}"


FINDINGS: tuple[Finding, ...] = (
    Finding(
        "LC-CUT-FOLDS-TOOL-GROUP",
        frozenset({"1.2.0"}),
        "C1",
        "a cut that lands on a tool result moves forward past the whole group: the AI "
        "message and its results are summarized, and with keep=('messages', n) the next "
        "model call can see nothing but the summary",
        "SummarizationMiddleware: 'preserving recent messages and maintaining context "
        "continuity by ensuring AI/Tool message pairs remain together' (class docstring); "
        "PR #34609: 'we move backward to include the AI message that requested those tools'",
        "a step whose trigger holds and whose kept tail, as keep counts it, starts on a "
        "tool result whose call is before it (where that call opens the conversation, the "
        "model keeps everything and 1.2.0 folds the group all the same)",
        lambda s: s.due and s.in_group,
        _test("test_lc_cut_folds_tool_group"),
    ),
    Finding(
        "LC-FOLD-KEEPS-ORPHAN-RESULT",
        frozenset({"1.2.0", "1.3.14", "1.5.2"}),
        "C1",
        "a fold keeps a tool result whose AI message it summarized when results come back "
        "late (after another message) or interleaved across AI messages: the cut moves back "
        "to the nearest AI message that asked for one result at the cut (1.2.0: not at all), "
        "and every other kept result's call is summarized; the provider rejects the next call",
        "SummarizationMiddleware: 'preserving recent messages and maintaining context "
        "continuity by ensuring AI/Tool message pairs remain together' (class docstring); "
        "upstream issue #38352 (open)",
        "a fold whose measured tail splits tool units (results of two earlier AI messages, "
        "or a result past the run at its start) and that keeps an orphaned result",
        lambda s: s.fires and s.splits_units and s.orphaned,
        _test("test_lc_fold_keeps_orphan_result"),
    ),
    Finding(
        "LC-TRIM-WINDOW-DROPS-SUMMARY",
        frozenset({"1.2.0", "1.3.14", "1.5.2"}),
        "S6",
        "when the last trim_tokens_to_summarize tokens (default 4000) of the folded messages "
        "hold no human message (a long tool-using stretch), the trim keeps nothing and the "
        "folded messages are replaced by 'Previous conversation was too long to summarize.' "
        "without the summary model being asked",
        "SummarizationMiddleware.__init__: 'trim_tokens_to_summarize: Maximum tokens to keep "
        "when preparing messages for the summarization call' (it keeps none); upstream issue "
        "#39261 (closed, still on 1.5.2)",
        "a fold under a summary trim window whose folded messages end in no human message "
        "within the window",
        never,  # checked by its program; the lockstep passes trim_tokens_to_summarize=None
        _test("test_lc_trim_window_drops_summary"),
    ),
    Finding(
        "LC-SUMMARY-FAILURE-FABRICATED",
        frozenset({"1.2.0", "1.3.14"}),
        "S6/S7",
        "a summarizer call that fails does not fail the step: the folded messages are "
        "removed and replaced by a 'summary' that is the error's text",
        "SummarizationMiddleware (1.5.2): 'If a summary call still fails, the underlying "
        "error propagates rather than fabricating a summary'; release 1.3.15: 'preserve "
        "history on SummarizationMiddleware summary failure (#39268)'",
        "a fold whose summarizer call fails",
        lambda s: s.fires and s.summarizer_fails,
        _test("test_lc_summary_failure_fabricated"),
    ),
    Finding(
        "LC-STALE-REPORT-REFOLDS",
        frozenset({"1.3.14", "1.5.2"}),
        "C1",
        "after a fold the newest kept AI message still carries the provider's report of a "
        "prompt the fold removed; a token or fraction trigger reads it as the "
        "conversation's count and folds again, on a conversation far under the threshold",
        "TriggerClause: 'Trigger when the computed (or provider-reported) token count "
        "reaches or exceeds this value': the count of the messages before the call, "
        "which after a fold no report describes",
        "a step where the trigger holds only through a report made before the last fold",
        lambda s: s.fires_on_stale and not s.fires,
        _test("test_lc_stale_report_refolds"),
    ),
    Finding(
        "LC-TOOL-LIMIT-ANSWERS-ANSWERED-CALL",
        frozenset({"1.2.0", "1.3.14", "1.5.2"}),
        "B3/S6",
        "ToolCallLimitMiddleware counts and answers a tool call the agent has already "
        "answered (ToolStrategy's output tool): over the limit it adds a second tool message "
        "for that call, and providers reject two results for one call",
        "ToolCallLimitMiddleware (class docstring): \"'continue': Block exceeded tools, let "
        "execution continue\" and \"'end': Stop immediately with a `ToolMessage` for each "
        'exceeded tool call": a call the agent answered itself is no tool to block, and a '
        "provider takes one result per call; upstream issue #39815 (open)",
        "a run whose limit is reached by the structured-output call the agent answered",
        never,  # checked by its program; the lockstep does not run the limit
        _test("test_lc_tool_limit_answers_answered_call"),
    ),
    Finding(
        "LC-TOOL-LIMIT-END-ORPHAN",
        frozenset({"1.2.0", "1.3.14"}),
        "B3/S6",
        "ToolCallLimitMiddleware(exit_behavior='end') ends the run with the calls of the "
        "limited tool that were still allowed unanswered: the stored conversation has an "
        "AI message whose calls no tool message answers, which providers reject on the "
        "next call",
        "ExitBehavior 'end' (1.2.0, 1.3.14): 'Raises NotImplementedError if there are "
        "other pending tool calls (due to parallel tool calling)'; release 1.3.15: "
        "'prevent orphaned tool_calls in ToolCallLimitMiddleware end behavior (#39258)'",
        "a run ended by the tool-call limit with exit_behavior='end' while the same AI "
        "message also has calls of the limited tool under the limit",
        never,  # checked by its program; the lockstep does not run the limit
        _test("test_lc_tool_limit_end_orphan"),
    ),
)

BY_ID = {f.id: f for f in FINDINGS}


def registered(version: str) -> list[Finding]:
    """The findings registered for a release (``CTXAUDIT_FINDINGS`` overrides)."""
    return registered_for(FINDINGS, version)


def left_out(version: str, step: Step) -> str | None:
    """The registered finding whose region ``step`` is in, if any."""
    return first_in_region(registered(version), step)
