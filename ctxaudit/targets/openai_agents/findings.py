"""openai-agents findings: where a release breaks a property. The one reviewed place.

Each names the property, the releases it is registered for, the doc line it breaks,
the narrowest region of steps where it shows (a predicate the lockstep uses to leave
exactly that region out) and its regression test. A regression test asserts the
finding still reproduces, so it fails when the release is fixed.

``CTXAUDIT_FINDINGS`` overrides the registry for one run (the audit uses it): ``all``
or a comma-separated list of ids (``none``: none).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from ctxaudit.targets.base import registered_for

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
    late: bool  # another writer appends while the compact call is in flight


@dataclass(frozen=True)
class Finding:
    id: str
    versions: frozenset[str]  # registered for
    prop: str
    summary: str
    breaks: str  # the doc line it breaks, quoted, with where it is
    region: str  # in words
    in_region: Callable[[Step], bool]
    repro: str
    #: what the lockstep leaves out in the region: the whole step (the model adopts
    #: the release's history), or only the run's answer (S9; the history is compared)
    leaves_out: Literal["step", "answer"] = "step"


def _test(name: str) -> str:
    return f"{FINDINGS_TESTS}::{name}"


def _never(_: Any) -> bool:
    return False


FINDINGS: tuple[Finding, ...] = (
    Finding(
        "OA-WINDOW-HIDES-HISTORY",
        frozenset({"0.22.3", "0.23.1", "0.24.0"}),
        "S6/C1",
        "with a store whose retrieval default (SessionSettings.limit) shows fewer items "
        "than it holds, the compaction session reads only that window: a whole-history "
        "compaction sends the compact call the window and then replaces the whole "
        "history, deleting the items outside it without ever compacting them (manual "
        "run_compaction on every release; automatic too on 0.22.3), and the decision "
        "hook is first asked over the window's candidates, so an automatic compaction "
        "that the model-visible suffix warrants is declined (0.23.1, 0.24.0: with the "
        "default hook and a window under 10 items, automatic compaction never runs)",
        "OpenAIResponsesCompactionSession (0.23.1, 0.24.0): 'Explicit manual "
        "`run_compaction()` calls still compact the stored history'; sessions docs "
        "(0.22.3): 'Compaction clears and rewrites the session history'; "
        "default_should_trigger_compaction: 'compact when >= 10 candidate items exist'",
        "a step after which the store holds more than its window shows, where a "
        "whole-history compaction (manual, or automatic where the contract's scope is "
        "the whole history) is approved by the model or over the window, or a suffix "
        "compaction the model approves is not approved over the window",
        lambda s: (
            s.hidden
            and (
                ((s.manual or s.scope == "whole") and (s.fires or s.fires_on_window))
                or (s.fires and not s.fires_on_window)
            )
        ),
        _test("test_oa_window_hides_history"),
    ),
    Finding(
        "OA-APPEND-DURING-COMPACTION-LOST",
        frozenset({"0.7.0", "0.22.3"}),
        "S3/S6",
        "an item another writer appends to the store while the compact call is in "
        "flight is deleted by the whole-history replacement that follows",
        "sessions docs: 'Compaction clears and rewrites the session history'; "
        "OpenAIResponsesCompactionSession (0.23.1 on): 'Automatic compaction matches "
        "stored history against the latest successful model exchange'; the JS SDK: 'An "
        "append still persists its items when its receipt is stale'",
        "an automatic compaction during which another writer appends",
        lambda s: not s.manual and s.fires and s.late,
        _test("test_oa_append_during_compaction_lost"),
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
        _never,
        _test("test_oa_clear_add_empties_session"),
    ),
)

BY_ID = {f.id: f for f in FINDINGS}


def registered(version: str) -> list[Finding]:
    """The findings registered for a release (``CTXAUDIT_FINDINGS`` overrides)."""
    return registered_for(FINDINGS, version)


def left_out(version: str, step: Step) -> Finding | None:
    """The registered finding whose region ``step`` is in, if any; a finding that
    leaves out the whole step comes before one that leaves out only the answer."""
    found = [f for f in registered(version) if f.in_region(step)]
    found.sort(key=lambda f: f.leaves_out != "step")
    return found[0] if found else None
