"""openai-agents' own bug history as seed-free programs (docs/notes/bug-history-openai-agents.md).

The record's form is :class:`ctxaudit.targets.bug_history.Bug`. Each program is plain
openai-agents: a scripted ``Model`` subclass, an in-memory or SQLite session, a stand-in
client whose ``responses.compact`` answers at once; no server, no key. The releases
before the fixes (0.18.2, 0.19.2, 0.19.4, 0.21.0) are not audited; their environments
are built from the locks committed beside the audited ones (``locks/``) only to run
these programs.
"""

from __future__ import annotations

from pathlib import Path

from ctxaudit.targets.bug_history import Bug

HERE = Path(__file__).parent
#: the audited releases after every fix below: each program must hold there
FIXED = ("0.22.3", "0.23.1", "0.24.0")

BUGS: tuple[Bug, ...] = (
    Bug(
        "openai/openai-agents-python#3857",
        "a streamed run whose model call is retried rewinds the session input it had "
        "saved: the user's message is lost from the history",
        "#3857 (0.18.3)",
        HERE / "oa_3857_streamed_retry_loses_input.py",
        fails_on=("0.18.2",),
        holds_on=("0.19.4", *FIXED),
        before="0.18.2",
    ),
    Bug(
        "openai/openai-agents-python#4160",
        "the answer of a max_turns error handler reaches the caller but never the session "
        "(non-streamed runs)",
        "#4160 (0.19.3)",
        HERE / "oa_4160_max_turns_answer_unstored.py",
        fails_on=("0.19.2",),
        holds_on=FIXED,
        before="0.19.2",
    ),
    Bug(
        "openai/openai-agents-python#4298",
        "a compaction cancelled while it writes the compacted history leaves the session "
        "empty: the rollback caught Exception, and CancelledError is not one",
        "#4298 (0.20.0)",
        HERE / "oa_4298_cancelled_replacement_empties.py",
        fails_on=("0.7.0", "0.19.4"),
        holds_on=FIXED,
        before="0.19.4",
    ),
    Bug(
        "openai/openai-agents-python#4324",
        "a session retrieval limit whose window starts at a tool output sends the model "
        "that output without its call",
        "#4324 (0.20.0)",
        HERE / "oa_4324_limit_window_orphan_output.py",
        fails_on=("0.19.4",),
        holds_on=FIXED,
        before="0.19.4",
    ),
    Bug(
        "openai/openai-agents-python#4446",
        "the run's usage leaves out the compaction call its session makes after the turn",
        "#4446 (0.21.1)",
        HERE / "oa_4446_compaction_usage_uncounted.py",
        fails_on=("0.7.0", "0.21.0"),
        holds_on=FIXED,
        before="0.21.0",
    ),
)
