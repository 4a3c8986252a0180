"""openai-agents findings: where a release breaks a property. The one reviewed place.

Each is a :class:`~ctxaudit.targets.base.ReleaseFinding` over the lockstep's step
(:class:`Step`): the property, the releases, the doc line it breaks, the narrowest region
where it shows and the regression test that asserts it still reproduces.

``CTXAUDIT_FINDINGS`` overrides the registry for one run (the audit uses it): ``all``
or a comma-separated list of ids (``none``: none).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ctxaudit.targets.base import ReleaseFinding, never, registered_for

NAME = "openai-agents"
FINDINGS_TESTS = "tests/openai_agents/inenv/test_findings.py"


@dataclass(frozen=True)
class Step:
    """A lockstep step, as a region reads it."""

    manual: bool  # a manual run_compaction, not a run
    hidden: bool  # the store holds items its retrieval window does not show
    fires: bool  # the model compacts here
    #: the hook approves over the newest window of the history (what a compaction
    #: session reads through the store's retrieval default)
    fires_on_window: bool
    scope: str  # the contract's automatic scope (model/session.py: "whole", "suffix")
    compact_fails: bool  # the compact call fails
    #: another writer writes to the store itself (appends, pops, clears) while the
    #: compact call is in flight
    late: bool
    #: a write through the compaction session (add_items, pop_item, clear_session) is
    #: made while the compact call is in flight
    during_wrapper: bool = False
    #: the step goes through one kept compaction session after the store was written
    #: outside it (a pop, a clear, an append on the store itself) and before anything
    #: made that session read the store again
    stale: bool = False
    #: a run whose model call is sent a window of the history that starts at a tool
    #: output whose call the window cuts off
    orphan_output: bool = False


@dataclass(frozen=True)
class Finding(ReleaseFinding[Step]):
    #: what the lockstep leaves out in the region: the whole step (the model adopts
    #: the release's history), only the run's answer (S9; the history is compared), or
    #: only what its model call is sent (the history and the answer are compared)
    leaves_out: Literal["step", "answer", "input"] = "step"


def _test(name: str) -> str:
    return f"{FINDINGS_TESTS}::{name}"


FINDINGS: tuple[Finding, ...] = (
    Finding(
        "OA-WINDOW-HIDES-HISTORY",
        frozenset({"0.22.3", "0.23.1", "0.24.0"}),
        "S6/C1",
        "with a store whose retrieval default (SessionSettings.limit) shows fewer items "
        "than it holds, a whole-history compaction reads only that window: it sends the "
        "compact call the window and then replaces the whole history, deleting the items "
        "outside it without ever compacting them, and its hook is asked over the window's "
        "candidates only (manual run_compaction on every release; automatic too on 0.22.3, "
        "where every compaction replaces the whole history)",
        "OpenAIResponsesCompactionSession.run_compaction (0.23.1, 0.24.0): 'Manual calls "
        "replace the complete stored history, even when the underlying retrieval default "
        "exposes fewer items to the compaction request'; sessions docs (0.22.3): "
        "'Compaction clears and rewrites the session history'",
        "a step after which the store holds more than its window shows, where a "
        "whole-history compaction (manual, or automatic where the contract's scope is "
        "the whole history) is approved by the model or over the window",
        lambda s: s.hidden and (s.manual or s.scope == "whole") and (s.fires or s.fires_on_window),
        _test("test_oa_window_hides_history"),
    ),
    Finding(
        "OA-HOOK-ASKED-OVER-WINDOW",
        frozenset({"0.23.1", "0.24.0"}),
        "S6/C1",
        "with a store whose retrieval default shows fewer items than it holds, an automatic "
        "compaction's decision hook is first asked over the window's candidates, not over "
        "the model-visible suffix it would compact: a compaction the suffix warrants is "
        "declined (with the default hook and a window under 10 items, automatic compaction "
        "never runs). The SDK's own tests pin asking the hook over that bounded view, so "
        "this may be its design; no fix is verified",
        "default_should_trigger_compaction: 'compact when >= 10 candidate items exist'; "
        "OpenAIResponsesCompactionSession: automatic compaction 'atomically replace[s] a "
        "bounded, model-visible suffix while retaining older history'",
        "an automatic step over a suffix-scoped contract after which the store holds more "
        "than its window shows, where the model approves the suffix compaction and the hook "
        "over the window does not",
        lambda s: (
            s.hidden and not s.manual and s.scope == "suffix" and s.fires and not s.fires_on_window
        ),
        _test("test_oa_hook_asked_over_window"),
    ),
    Finding(
        "OA-APPEND-DURING-COMPACTION-LOST",
        frozenset({"0.7.0", "0.22.3"}),
        "S3/S6",
        "an item another writer appends to the store while the compact call is in "
        "flight is deleted by the whole-history replacement that follows (automatic or "
        "manual: the same code); a pop or a clear made on the store meanwhile is undone "
        "by it, the removed items coming back in the compacted output",
        "sessions docs: 'Compaction clears and rewrites the session history'; "
        "OpenAIResponsesCompactionSession (0.23.1 on): 'Automatic compaction matches "
        "stored history against the latest successful model exchange'; the JS SDK: 'An "
        "append still persists its items when its receipt is stale'",
        "a compaction (automatic or manual) whose compact call succeeds while another "
        "writer writes to the store itself",
        lambda s: s.fires and s.late and not s.compact_fails,
        _test("test_oa_append_during_compaction_lost"),
    ),
    Finding(
        "OA-MANUAL-COMPACTION-LOSES-WRITES",
        frozenset({"0.23.1", "0.24.0"}),
        "S3/S6",
        "a manual run_compaction (and an automatic one over a store without the native "
        "suffix replacement, the 'legacy whole-history replacement') replaces the whole "
        "history with the compact call's output without checking that the history is "
        "still what it sent: an item another writer appends to the store while the "
        "compact call is in flight is deleted, and a pop or a clear made meanwhile is "
        "undone (0.23.1 fixed only the native automatic path)",
        "OpenAIResponsesCompactionSession._run_compaction: 'A concurrent add, pop, or "
        "clear waits here and then runs against the compacted state instead of being "
        "overwritten by a stale replacement'; (0.23.1 on) 'Skipped compaction "
        "replacement because the stored suffix changed'; sessions docs: 'Compaction "
        "clears and rewrites the session history'",
        "a manual compaction whose compact call succeeds while another writer writes to "
        "the store itself",
        lambda s: s.manual and s.fires and s.late and not s.compact_fails,
        _test("test_oa_manual_compaction_loses_writes"),
    ),
    Finding(
        "OA-KEPT-SESSION-MISSES-STORE-WRITES",
        frozenset({"0.7.0", "0.22.3", "0.23.1", "0.24.0"}),
        "S3/S6",
        "a compaction session kept for the conversation reads the history once and then "
        "tracks only the writes made through it: after the store is written directly (an "
        "append, a pop, a clear by another writer), the next manual run_compaction (and, "
        "before 0.23.1, the next automatic one) compacts the cached history and replaces "
        "the whole store with it, deleting what was appended without compacting it and "
        "bringing back what was popped or cleared",
        "run_compaction (0.23.1 on): 'Manual calls replace the complete stored history'; "
        "sessions docs: 'Compaction clears and rewrites the session history'; "
        "SessionABC: the underlying store is a Session any writer may use",
        "a compaction step through one kept compaction session after the store was "
        "written outside it, before that session read the store again",
        lambda s: s.stale and (s.manual or s.scope == "whole"),
        _test("test_oa_kept_session_misses_store_writes"),
    ),
    Finding(
        "OA-WRAPPER-WRITE-DURING-COMPACTION-LOST",
        frozenset({"0.7.0"}),
        "S3/S6",
        "a write through the compaction session itself while its compact call is in "
        "flight (openai-agents-python #4679) is overwritten by the replacement that "
        "follows: an item added is deleted, a clear is undone (the cleared history comes "
        "back compacted), a popped item comes back in the compacted output",
        "sessions docs: 'Compaction clears and rewrites the session history, so the SDK "
        "waits for compaction to finish'; S3/S6: nothing written is lost, nothing "
        "removed comes back (0.22 on serializes the writes behind the compaction)",
        "a compaction whose compact call succeeds while a write is made through the "
        "compaction session",
        lambda s: s.fires and s.during_wrapper and not s.compact_fails,
        _test("test_oa_wrapper_write_during_compaction_lost"),
    ),
    Finding(
        "OA-WINDOW-SENDS-ORPHAN-OUTPUT",
        frozenset({"0.22.3", "0.23.1", "0.24.0"}),
        "C1",
        "with a store whose retrieval default (SessionSettings.limit) shows a window that "
        "starts at a tool output, wrapped in the compaction session, a run sends the model "
        "that output without its call (the Responses API refuses such an input): the "
        "runner prunes what a limit orphans only when the session it is given has the "
        "limit, and the compaction session does not expose its store's settings "
        "(openai-agents-python #4324's fix, 0.20.0, covers the store and RunConfig)",
        "openai-agents-python #4324 (0.20.0): 'prune orphaned tool outputs from limited "
        "sessions'; the property F3: no tool result is sent without its call",
        "a run through the compaction session whose model call is sent a window that starts "
        "at a tool output whose call the window cuts off",
        lambda s: s.orphan_output and not s.manual,
        _test("test_oa_window_sends_orphan_output"),
        leaves_out="input",
    ),
    Finding(
        "OA-COMPACTION-FAILURE-FAILS-RUN",
        frozenset({"0.7.0", "0.22.3", "0.23.1", "0.24.0"}),
        "S9",
        "an automatic compaction whose compact call fails makes Runner.run raise after "
        "the turn was stored and answered: the caller never gets the answer, and a "
        "retry stores the input a second time",
        "OpenAIResponsesCompactionSession: 'automatically calls the OpenAI "
        "responses.compact API after each turn'; the property S9: a turn served "
        "compacted answers what it would answer uncompacted (the history is unchanged, "
        "S7 holds)",
        "an automatic compaction whose compact call fails (only the answer is left out)",
        lambda s: not s.manual and s.fires and s.compact_fails,
        _test("test_oa_compaction_failure_fails_run"),
        leaves_out="answer",
    ),
    Finding(
        "OA-CLEAR-ADD-EMPTIES-SESSION",
        frozenset({"0.7.0"}),
        "S7",
        "a store whose add_items refuses the compacted output after the compaction "
        "cleared it is left empty: clear, then a failed add, and no rollback",
        "sessions docs: 'Compaction clears and rewrites the session history, so the SDK "
        "waits for compaction to finish'; S7: a failed write changes nothing",
        "a compaction whose replacement write fails (the lockstep's SQLite store never "
        "refuses; checked by its program)",
        never,
        _test("test_oa_clear_add_empties_session"),
    ),
)

BY_ID = {f.id: f for f in FINDINGS}


def registered(version: str) -> list[Finding]:
    """The findings registered for a release (``CTXAUDIT_FINDINGS`` overrides)."""
    return registered_for(FINDINGS, version)


def left_out(
    version: str, step: Step, kinds: tuple[str, ...] = ("step", "answer")
) -> Finding | None:
    """The registered finding whose region ``step`` is in, if any, among those that
    leave out one of ``kinds``; a finding that leaves out the whole step comes before
    one that leaves out only the answer."""
    found = [f for f in registered(version) if f.leaves_out in kinds and f.in_region(step)]
    found.sort(key=lambda f: f.leaves_out != "step")
    return found[0] if found else None
