"""OA-APPEND-DURING-COMPACTION-LOST (S3/S6): after the compact call, the history is read
again and the replacement skipped when it is no longer the snapshot that was sent. This
closes the window of the HTTP call; a complete fix compares and replaces in one store
transaction, as 0.23.1's native suffix replacement does."""

from ctxaudit.fixes import Edit, Fix, Form

SESSION = "agents/memory/openai_responses_compaction_session.py"

CALL = "        compacted = await self.client.responses.compact(**compact_kwargs)\n"
CALL_THEN_CHECK = CALL + (
    "        if await self.underlying_session.get_items() != session_items:\n"
    '            logger.warning("skip: history changed during compaction")\n'
    "            self._compaction_candidate_items = self._session_items = None\n"
    "            return\n"
)
ROLLBACK_READ = (
    "        previous_items = await self._get_all_underlying_session_items()\n        try:\n"
)
ROLLBACK_READ_THEN_CHECK = (
    "        previous_items = await self._get_all_underlying_session_items()\n"
    "        if _normalize_compaction_session_items(previous_items) != session_items:\n"
    '            logger.warning("skip: history changed during compaction")\n'
    "            self._compaction_candidate_items = self._session_items = None\n"
    "            return\n"
    "        try:\n"
)

FIX = Fix(
    finding="OA-APPEND-DURING-COMPACTION-LOST",
    why="the replacement is skipped when the stored history changed during the compact call",
    forms=(
        Form(versions="<0.8.0", edits=(Edit(SESSION, CALL, CALL_THEN_CHECK),)),
        Form(
            versions=">=0.8.0,<0.23.0",
            edits=(Edit(SESSION, ROLLBACK_READ, ROLLBACK_READ_THEN_CHECK),),
        ),
    ),
)
