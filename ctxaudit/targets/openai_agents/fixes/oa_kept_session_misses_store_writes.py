"""OA-KEPT-SESSION-MISSES-STORE-WRITES (S3/S6): a manual run_compaction reads the stored
history afresh instead of the compaction session's candidate cache, which sees only the
writes made through the session; before 0.23 the cache is dropped at every compaction
(manual and automatic calls share the code there)."""

from ctxaudit.fixes import Edit, Fix, Form

SESSION = "agents/memory/openai_responses_compaction_session.py"

ROLLBACK_CHECK = "            await self._get_all_underlying_session_items()\n"
ENSURE_023 = (
    ROLLBACK_CHECK
    + "        compaction_candidate_items, session_items, _ = await self._ensure_compaction_candidates(\n"
)
FRESH_023 = (
    ROLLBACK_CHECK
    + "        if not is_automatic:  # the store may have been written outside this session\n"
    "            self._compaction_candidate_items = self._session_items = None\n"
    + ENSURE_023.removeprefix(ROLLBACK_CHECK)
)
ENSURE_022 = (
    "        compaction_candidate_items, session_items = await self._ensure_compaction_candidates(\n"
    "            read_items\n"
)
ENSURE_07 = (
    "        compaction_candidate_items, session_items = await self._ensure_compaction_candidates()\n"
    "\n"
    "        force ="
)
RESET = (
    "        # the store may have been written outside this session since the cache was read\n"
    "        self._compaction_candidate_items = self._session_items = None\n"
)

FIX = Fix(
    finding="OA-KEPT-SESSION-MISSES-STORE-WRITES",
    why="a manual compaction reads the stored history, not the session's candidate cache",
    forms=(
        Form(versions="<0.8.0", edits=(Edit(SESSION, ENSURE_07, RESET + ENSURE_07),)),
        Form(versions=">=0.22.0,<0.23.0", edits=(Edit(SESSION, ENSURE_022, RESET + ENSURE_022),)),
        Form(versions=">=0.23.0", edits=(Edit(SESSION, ENSURE_023, FRESH_023),)),
    ),
)
