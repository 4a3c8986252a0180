"""OA-MANUAL-COMPACTION-LOSES-WRITES (S3/S6): a whole-history replacement (manual, or
automatic over a store without native suffix replacement) reads the stored history
whole just before the compact call and again after it, and is skipped when the two
differ: another writer wrote meanwhile. Both reads are whole (the rollback read), so
the comparison does not depend on the retrieval window or on the candidate cache. This
closes the window of the HTTP call; a complete fix compares and replaces in one store
transaction, as the native suffix replacement does. Before 0.23 the same code is every
compaction's, and OA-APPEND-DURING-COMPACTION-LOST's fix is this one: the form needs
0.23's snapshot (an anchor), whose name its first edit reads."""

from ctxaudit.fixes import Edit, Fix, Form

SESSION = "agents/memory/openai_responses_compaction_session.py"

CALL = "        compacted = await self.client.responses.compact(**compact_kwargs)\n"
READ_THEN_CALL = (
    "        sent_history = (\n"
    "            await self._get_all_underlying_session_items() if snapshot is None else None\n"
    "        )\n" + CALL
)
ROLLBACK_READ = "            previous_items = await self._get_all_underlying_session_items()\n"
ROLLBACK_READ_THEN_CHECK = ROLLBACK_READ + (
    "            if previous_items != sent_history:\n"
    '                logger.warning("Skipped compaction replacement because the history changed.")\n'
    "                self._compaction_candidate_items = self._session_items = None\n"
    "                return\n"
)

FIX = Fix(
    finding="OA-MANUAL-COMPACTION-LOSES-WRITES",
    why="a whole-history replacement is skipped when the stored history changed during "
    "the compact call",
    forms=(
        Form(
            versions=">=0.23.0",
            edits=(
                Edit(SESSION, CALL, READ_THEN_CALL),
                Edit(SESSION, ROLLBACK_READ, ROLLBACK_READ_THEN_CHECK),
            ),
            anchors=((SESSION, "        snapshot: _CompactionSnapshot | None = None\n"),),
        ),
    ),
)
