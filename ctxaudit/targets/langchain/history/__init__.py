"""langchain's own bug history as seed-free programs (docs/notes/bug-history-langchain.md).

Each :class:`Bug` is one upstream report of the domain (summarization, the call limits)
that a plain langchain program shows: exit 1 when the bug shows, 0 when it does not,
anything else is the program's own error (never a verdict). A fixed bug's program fails
on the last release before its fix and holds on a release after it; an unfixed one's
fails on the current release. ``fails_on`` and ``holds_on`` name only releases whose
environments the test suite builds anyway (``tests/langchain/test_langchain.py``), so
running them costs a second each; the exact release before a fix, where it is not one
of them, is named in ``before``.

A bug that is a registered finding runs that finding's program (``repro/``) rather than
a copy of it.
"""

from __future__ import annotations

from pathlib import Path

from ctxaudit.targets.bug_history import Bug
from ctxaudit.targets.langchain.repro import program as finding_program

HERE = Path(__file__).parent


BUGS: tuple[Bug, ...] = (
    Bug(
        "langchain-ai/langchain#34282",
        "summarization cut lands on tool results and moves forward: the AI message and "
        "its results are summarized away",
        "#34609 (langchain 1.2.x, after 1.2.0)",
        finding_program("LC-CUT-FOLDS-TOOL-GROUP"),
        fails_on=("1.2.0",),
        holds_on=("1.3.14", "1.5.2"),
        before="1.2.0",
        finding="LC-CUT-FOLDS-TOOL-GROUP",
    ),
    Bug(
        "langchain-ai/langchain#34517",
        "the summary prompt is the messages' repr, every metadata field included",
        "#34607 (after 1.2.0, in 1.3.14)",
        HERE / "lc_34517_summary_prompt_metadata.py",
        fails_on=("1.2.0",),
        holds_on=("1.3.14", "1.5.2"),
        before="1.2.0",
    ),
    Bug(
        "langchain-ai/langchain#38867",
        "a failed summary call deletes the history and inserts the error's text as the summary",
        "#39268 (langchain 1.3.15)",
        finding_program("LC-SUMMARY-FAILURE-FABRICATED"),
        fails_on=("1.2.0", "1.3.14"),
        holds_on=("1.5.2",),
        before="1.3.14",
        finding="LC-SUMMARY-FAILURE-FABRICATED",
    ),
    Bug(
        "langchain-ai/langchain#34159",
        "ToolCallLimitMiddleware exit_behavior='end' leaves parallel tool calls "
        "unanswered (invalid state)",
        "#39258 (langchain 1.3.15)",
        finding_program("LC-TOOL-LIMIT-END-ORPHAN"),
        fails_on=("1.2.0", "1.3.14"),
        holds_on=("1.5.2",),
        before="1.3.14",
        finding="LC-TOOL-LIMIT-END-ORPHAN",
    ),
    Bug(
        "langchain-ai/langchain#38352",
        "the summarization cut keeps orphan tool messages when a run mixes results of "
        "two AI messages",
        "unfixed (open; PRs #38357, #38382, #38423, #38449, #39269 not merged)",
        finding_program("LC-FOLD-KEEPS-ORPHAN-RESULT"),
        fails_on=("1.2.0", "1.3.14", "1.5.2"),
        holds_on=(),
        before="",
        finding="LC-FOLD-KEEPS-ORPHAN-RESULT",
    ),
    Bug(
        "langchain-ai/langchain#39261",
        "the history is replaced by a placeholder, the summary model never called, when "
        "no human message falls in the trim window",
        "unfixed (closed upstream; 1.5.2 still reproduces it)",
        finding_program("LC-TRIM-WINDOW-DROPS-SUMMARY"),
        fails_on=("1.2.0", "1.3.14", "1.5.2"),
        holds_on=(),
        before="",
        finding="LC-TRIM-WINDOW-DROPS-SUMMARY",
    ),
    Bug(
        "langchain-ai/langchain#39815",
        "ToolCallLimitMiddleware adds a second tool message for a call already answered "
        "(a structured-output tool call)",
        "unfixed (open)",
        finding_program("LC-TOOL-LIMIT-ANSWERS-ANSWERED-CALL"),
        fails_on=("1.2.0", "1.3.14", "1.5.2"),
        holds_on=(),
        before="",
        finding="LC-TOOL-LIMIT-ANSWERS-ANSWERED-CALL",
    ),
)
