"""OA-WINDOW-HIDES-HISTORY (S6): a whole-history compaction reads the whole stored history,
not the store's retrieval window, so the compact call gets exactly what its replacement
deletes and the decision hook counts every candidate.

From 0.23 on only manual calls. There run_compaction documents the bug as its contract:
"Manual calls replace the complete stored history, even when the underlying retrieval
default exposes fewer items to the compaction request": what is replaced is promised
whole, what is compacted only the window, so the items between are deleted uncompacted
(S6). The fix keeps the first promise and compacts what it replaces; it cannot be
narrowed to the docstring, which promises the loss, and it changes the SDK test that
pins that (RELOAD_PIN). The automatic path keeps its bounded, model-visible read, which the
class documents and the SDK's own tests pin; what its hook is asked over is
OA-HOOK-ASKED-OVER-WINDOW. Before 0.23 every compaction replaces the whole history
("Compaction clears and rewrites the session history"), so both read it whole, and on
0.22.x ``auto`` also falls back to ``input`` when the history is longer than the window:
the response chain holds only the window the model was sent."""

from ctxaudit.fixes import Edit, Fix, Form

SESSION = "agents/memory/openai_responses_compaction_session.py"

#: the candidate read of run_compaction (0.23 on), manual and automatic alike
CANDIDATES = (
    "        compaction_candidate_items, session_items, _ = await self._ensure_compaction_candidates(\n"
    "            read_items\n"
    "        )\n"
)
CANDIDATES_MANUAL_WHOLE = (
    "        compaction_candidate_items, session_items, _ = await self._ensure_compaction_candidates(\n"
    "            read_items,\n"
    "            # a manual call replaces the complete stored history: it reads all of it\n"
    "            limit=None if is_automatic else _ALL_SESSION_ITEMS_LIMIT,\n"
    "        )\n"
)
WHOLE_READ = "        history = _normalize_compaction_session_items(await self.underlying_session.get_items())\n"
WHOLE_READ_ALL = (
    "        history = _normalize_compaction_session_items(\n"
    "            await self.underlying_session.get_items(limit=_ALL_SESSION_ITEMS_LIMIT)\n"
    "        )\n"
)
KWARGS = '        compact_kwargs: dict[str, Any] = {"model": self.model}\n'
INPUT_UNDER_WINDOW = (
    '        settings = getattr(self.underlying_session, "session_settings", None)\n'
    '        window = getattr(settings, "limit", None)\n'
    "        if (\n"
    "            isinstance(window, int)\n"
    "            and len(session_items) > window\n"
    '            and (requested_mode or self.compaction_mode) == "auto"\n'
    "        ):\n"
    '            resolved_mode = "input"  # the response chain holds only the window\n' + KWARGS
)

SESSION_TESTS = (
    "tests/memory/test_openai_responses_compaction_session.py::TestOpenAIResponsesCompactionSession"
)
#: the SDK's tests that pin a manual read through the session's candidate cache, each
#: over a mock store whose get_items never returns what add_items was given: any fix
#: that makes a manual compaction read the store fails them (OA-KEPT-SESSION-MISSES-
#: STORE-WRITES' fix names them too)
CACHE_PINS = (
    f"{SESSION_TESTS}::test_run_compaction_uses_sanitized_cached_items_after_add",
    f"{SESSION_TESTS}::test_run_compaction_auto_uses_input_when_last_response_unstored",
)
#: the bug itself, pinned (0.22.3, 0.23.1, 0.24.0 alike): a store of 13 items with a
#: one-item retrieval window; a forced manual run_compaction must send the compact call
#: only the newest item and leave only that item stored, the 12 others deleted without
#: ever being compacted. 0.23 on documents it ("Manual calls replace the complete stored
#: history, even when the underlying retrieval default exposes fewer items to the
#: compaction request"): the fix changes that documented contract, which is S6's
#: finding, so this test changes with it
RELOAD_PIN = (
    "tests/test_run_impl_resume_paths.py::test_compaction_reload_preserves_session_retrieval_window"
)
#: and (0.23 on) those that assert the limit a manual read passes (the window's
#: default, where the fix reads all)
PINS_023 = (
    *CACHE_PINS,
    f"{SESSION_TESTS}::test_rollback_budget_bounds_failed_clear_inspection",
    f"{SESSION_TESTS}::test_exact_rollback_budget_refreshes_complete_snapshot",
    RELOAD_PIN,
)

FIX = Fix(
    finding="OA-WINDOW-HIDES-HISTORY",
    why="a whole-history compaction (0.23 on: a manual one) reads the history with no "
    "retrieval limit (and, on 0.22.x, auto compacts by input when the history is longer than "
    "the window)",
    forms=(
        Form(
            versions=">=0.23.0",
            edits=(Edit(SESSION, CANDIDATES, CANDIDATES_MANUAL_WHOLE),),
            pins=PINS_023,
        ),
        Form(
            versions="<0.23.0",
            edits=(
                Edit(SESSION, WHOLE_READ, WHOLE_READ_ALL),
                Edit(SESSION, KWARGS, INPUT_UNDER_WINDOW),
            ),
            pins=(RELOAD_PIN,),
        ),
    ),
)
