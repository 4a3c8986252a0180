"""strands-agents findings: where a release breaks a property. The one reviewed place.

Each is a :class:`~ctxaudit.targets.base.ReleaseFinding` over a restore of the lockstep
(:class:`~ctxaudit.concerns.restore.RestoreStep`), a fold that took recent messages
(:class:`~ctxaudit.concerns.restore.FoldStep`) or a turn after which only the pins of a
manager's first try are held (:class:`~ctxaudit.concerns.restore.PinStep`): the
property, the releases, the doc line it breaks, the narrowest region where it shows and
the regression test that asserts it still reproduces.

``CTXAUDIT_FINDINGS`` overrides the registry for one run (the audit uses it): ``all``
or a comma-separated list of ids (``none``: none).
"""

from __future__ import annotations

from ctxaudit.concerns.restore import (
    SUMMARIZING,
    WINDOW,
    FoldStep,
    PinStep,
    RegionStep,
    RestoreStep,
)
from ctxaudit.targets.base import ReleaseFinding, first_in_region, registered_for

NAME = "strands-agents"
FINDINGS_TESTS = "tests/strands_agents/inenv/test_findings.py"

Finding = ReleaseFinding[RegionStep]

#: the audited releases
ALL = frozenset({"1.40.0", "1.43.0", "1.62.0"})
#: the audited releases that pin (pin_first came with 1.43.0)
PINNING = frozenset({"1.43.0", "1.62.0"})
#: what the session docs promise of a restore
SESSIONS_DOC = (
    "Session Management (strandsagents.com, user guide): 'Strands provides built-in session "
    "persistence capabilities that automatically capture and restore this information, "
    "allowing agents to seamlessly continue conversations where they left off' (the "
    "information: 'Conversation history (messages)' ... 'Other stateful information (like "
    "Conversation Manager)')"
)


def _pinned_log(s: RegionStep) -> bool:
    """A restore from the message log (FileSessionManager) after a reduction under
    pin_first (SnapshotSessionManager keeps the whole conversation and restores it)."""
    return (
        isinstance(s, RestoreStep) and s.settings.store == "file" and bool(s.settings.pin)
    ) and s.reduced


def _cut_over_tool_pairs(s: RegionStep) -> bool:
    """A fold that took recent messages, each a tool call or a tool result: the cut moved
    forward over tool pairs (a fold that takes a recent prompt, answer or summary is not
    this finding)."""
    return isinstance(s, FoldStep) and all(
        b.kind in ("call", "result") for m in s.took for b in m.blocks
    )


def _test(name: str) -> str:
    return f"{FINDINGS_TESTS}::{name}"


FINDINGS: tuple[Finding, ...] = (
    Finding(
        "SA-SUMMARY-PIN-RESTORE",
        PINNING,
        "S2",
        "with SummarizingConversationManager(pin_first=N), an agent restored from its "
        "session after a fold holds another conversation than the agent had: the pinned "
        "messages stay first in the store, but the restore skips as many stored messages as "
        "were folded from the front (list_messages(offset=removed_message_count)) and "
        "prepends only the summary, so the pinned messages are lost and as many folded ones "
        "come back beside the summary that replaced them (upstream issue #4027, open)",
        SESSIONS_DOC
        + "; pin_first: 'Pinned messages are protected from summarization and compacted to "
        "the front' (SummarizingConversationManager's docstring)",
        "a restore from FileSessionManager after a fold under pin_first",
        lambda s: s.settings.manager == SUMMARIZING and _pinned_log(s),
        _test("test_sa_summary_pin_restore"),
    ),
    Finding(
        "SA-WINDOW-PIN-RESTORE",
        PINNING,
        "S2",
        "with SlidingWindowConversationManager(pin_first=N), an agent restored from its "
        "session after a trim holds another conversation than the agent had: the trim keeps "
        "the pinned messages and drops those after them, but the restore skips as many "
        "stored messages from the front as were dropped, so the pinned messages are lost and "
        "as many trimmed ones come back (upstream issue #4087, closed; reproduces on 1.62.0)",
        SESSIONS_DOC
        + "; pin_first: 'Pinned messages are protected from eviction during context reduction' "
        "(SlidingWindowConversationManager's docstring)",
        "a restore from FileSessionManager after a trim under pin_first",
        lambda s: s.settings.manager == WINDOW and _pinned_log(s),
        _test("test_sa_window_pin_restore"),
    ),
    Finding(
        "SA-FAILED-SUMMARY-SKIPS-RESTORE",
        ALL,
        "S2",
        "when SummarizingConversationManager's summary fails, the agent keeps every message "
        "(reactively the call raises, proactively it goes on), but the manager has already "
        "counted the messages it meant to fold as removed (removed_message_count is raised "
        "before the summary is written), so an agent restored from its FileSessionManager "
        "session skips them: the oldest messages are lost from the restored conversation, "
        "with no summary in their place",
        SESSIONS_DOC + "; reduce_context: 'When e is None (proactive compression), "
        "summarization failure is logged and returns silently — the model call proceeds "
        "regardless' (the conversation unchanged)",
        "a restore from FileSessionManager after a summary failed",
        lambda s: isinstance(s, RestoreStep) and s.settings.store == "file" and s.summary_failed,
        _test("test_sa_failed_summary_skips_restore"),
    ),
    Finding(
        "SA-FOLD-TAKES-RECENT",
        ALL,
        "C1",
        "SummarizingConversationManager summarizes some of the newest "
        "preserve_recent_messages messages: when its share reaches them (a short "
        "conversation) and the oldest message it must keep is a tool result (or a call "
        "whose result does not follow), it moves the cut forward over the tool pairs, into "
        "the messages it keeps (preserve_recent_messages=3 over q0 t1 r-t1 a2 q3 folds q0 t1 "
        "r-t1 and keeps two)",
        "SummarizingConversationManager: 'preserve_recent_messages: Minimum number of "
        "recent messages to always keep' (its docstring; the user guide, Conversation "
        "Management: 'Minimum number of recent messages to always keep')",
        "a fold that took recent messages, each a tool call or a tool result",
        _cut_over_tool_pairs,
        _test("test_sa_fold_takes_recent"),
    ),
    Finding(
        "SA-RETRIED-REDACTION-NOT-STORED",
        frozenset({"1.40.0", "1.43.0"}),
        "S2",
        "a prompt the user's code passes again after a failed call (the same message object: "
        "the agent holds it twice, stored twice by FileSessionManager) and that a guardrail "
        "then redacts is redacted in both places the agent holds it (one object), but the "
        "session rewrites only its latest record: a restored agent holds the first copy as "
        "it was before the redaction, the content the guardrail blocked. Fixed upstream "
        "between 1.43.0 and 1.62.0 (RepositorySessionManager keeps the records it wrote and "
        "redact_latest_message rewrites every one of the redacted object: 'A retried prompt "
        "may have stored the same dict in an earlier record; rewrite those too')",
        SESSIONS_DOC
        + "; redact_latest_message: 'Redact the latest message appended to the session' "
        "(the agent calls it when the model's guardrail asks to redact the user's message)",
        "a restore from FileSessionManager after a guardrail redacted a retried prompt",
        lambda s: isinstance(s, RestoreStep) and s.settings.store == "file" and s.retried_redacted,
        _test("test_sa_retried_redaction_not_stored"),
    ),
    Finding(
        "SA-PINS-FEWER-THAN-PIN-FIRST",
        PINNING,
        "S6",
        "SummarizingConversationManager and SlidingWindowConversationManager pin the first "
        "pin_first messages only at their first try to reduce the conversation (once: "
        "_pin_first_applied); when that comes before the conversation holds pin_first "
        "messages (an overflow at the first prompts, a window asked to reduce a short "
        "conversation, a fold whose share is all pinned), the later of the first pin_first "
        "messages are never pinned and are summarized or trimmed like any other "
        "(pin_first=3, window_size=3: a first try at one message, then u0 a1 u2 a3 u4 loses a1)",
        "pin_first: 'Number of messages at the start of the conversation to permanently pin' "
        "(the docstring of both managers)",
        "a turn after which the front holds only the pins of the manager's first try",
        lambda s: isinstance(s, PinStep),
        _test("test_sa_pins_fewer_than_pin_first"),
    ),
)

BY_ID = {f.id: f for f in FINDINGS}


def registered(version: str) -> list[Finding]:
    """The findings registered for a release (``CTXAUDIT_FINDINGS`` overrides)."""
    return registered_for(FINDINGS, version)


def left_out(version: str, step: RegionStep) -> str | None:
    """The registered finding whose region ``step`` is in, if any."""
    return first_in_region(registered(version), step)
