"""OA-KEPT-SESSION-MISSES-STORE-WRITES (S3/S6): a manual run_compaction reads the stored
history afresh instead of the compaction session's candidate cache, which sees only the
writes made through the session. Before 0.23 every compaction decision reads that cache
(run_compaction, manual and automatic alike, and the runner's deferral of a compaction
after a turn with tool outputs, which forces the next one): there the cache is never
read, the store always is.

The SDK's own tests that pin the cache (0.22.3's
tests/memory/test_openai_responses_compaction_session.py, each over a mock store whose
get_items never returns what add_items was given):

- test_run_compaction_uses_sanitized_cached_items_after_add
- test_run_compaction_auto_uses_input_when_last_response_unstored

The other 213 tests of tests/memory pass with this fix, as with the earlier form that
reset the cache in run_compaction only."""

from ctxaudit.fixes import Edit, Fix, Form

SESSION = "agents/memory/openai_responses_compaction_session.py"

#: the end of the line before run_compaction's candidate read (the rollback budget's
#: check), whose start OA-MANUAL-COMPACTION-LOSES-WRITES' fix changes
ROLLBACK_CHECK = "_get_all_underlying_session_items()\n"
ENSURE_023 = (
    ROLLBACK_CHECK
    + "        compaction_candidate_items, session_items, _ = await self._ensure_compaction_candidates(\n"
)
FRESH_023 = (
    ROLLBACK_CHECK
    + "        if not is_automatic:  # the store may have been written outside this session:\n"
    "            # read it again into the candidate cache\n"
    "            self._compaction_candidate_items = self._session_items = None\n"
    "            await self._ensure_compaction_candidates()\n"
    + ENSURE_023.removeprefix(ROLLBACK_CHECK)
)
CACHED = (
    "        if self._compaction_candidate_items is not None and self._session_items is not None:\n"
    "            return (self._compaction_candidate_items[:], self._session_items[:])\n"
)
READ = "        # the store may have been written outside this session: read it, not the cache\n"

SESSION_TESTS = "tests/memory/test_openai_responses_compaction_session.py"
#: the SDK's tests that pin the cache, each over a mock store whose get_items never
#: returns what add_items was given (the docstring above)
PINS = tuple(
    f"{SESSION_TESTS}::TestOpenAIResponsesCompactionSession::{name}"
    for name in (
        "test_run_compaction_uses_sanitized_cached_items_after_add",
        "test_run_compaction_auto_uses_input_when_last_response_unstored",
    )
)

FIX = Fix(
    finding="OA-KEPT-SESSION-MISSES-STORE-WRITES",
    why="a compaction decision reads the stored history, not the session's candidate cache",
    forms=(
        Form(versions="<0.23.0", edits=(Edit(SESSION, CACHED, READ),), pins=PINS),
        Form(versions=">=0.23.0", edits=(Edit(SESSION, ENSURE_023, FRESH_023),), pins=PINS),
    ),
)
