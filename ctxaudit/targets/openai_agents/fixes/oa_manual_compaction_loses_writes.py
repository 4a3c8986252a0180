"""OA-MANUAL-COMPACTION-LOSES-WRITES (S3/S6): a whole-history replacement (manual, or
automatic over a store without native suffix replacement) reads the stored history
whole before the compact call and again after it, and is skipped when the two differ:
another writer wrote meanwhile. Both reads are whole (the rollback read), so the
comparison does not depend on the retrieval window or on the candidate cache. With a
rollback budget the first read is the budget's own (no read is added: the SDK's tests
count them); items that expired meanwhile (a time-filtered store: the later read is a
suffix of the first) are no write, and the replacement goes ahead. This
closes the window of the HTTP call; a complete fix compares and replaces in one store
transaction, as the native suffix replacement does. Before 0.23 the same code is every
compaction's, and OA-APPEND-DURING-COMPACTION-LOST's fix is this one: the form needs
0.23's snapshot (an anchor), whose name its first edit reads."""

from ctxaudit.fixes import Edit, Fix, Form

SESSION = "agents/memory/openai_responses_compaction_session.py"

#: the rollback budget's read before the candidates (manual calls with a budget), kept:
#: it is the history the compact call is sent, read whole
BUDGET_READ = (
    "        if not is_automatic and self.max_rollback_items is not None:\n"
    "            # Check before even a default-unlimited candidate read. Time-filtered\n"
    "            # stores can change during the request despite the wrapper mutation lock.\n"
    "            await self._get_all_underlying_session_items()\n"
)
BUDGET_READ_KEPT = (
    "        sent_history: list[TResponseInputItem] | None = None\n"
    + BUDGET_READ.replace("            await self", "            sent_history = await self")
)
#: the same budget's read just before the call (an automatic, legacy whole replacement)
LEGACY_READ = (
    "        if is_automatic and snapshot is None and self.max_rollback_items is not None:\n"
    "            await self._get_all_underlying_session_items()\n"
)
LEGACY_READ_KEPT = LEGACY_READ.replace(
    "            await self", "            sent_history = await self"
)
CALL = "        compacted = await self.client.responses.compact(**compact_kwargs)\n"
#: without a budget, one whole read before the call (the budget's reads count exactly:
#: the SDK's tests pin them)
READ_THEN_CALL = (
    "        if snapshot is None and sent_history is None:\n"
    "            sent_history = await self._get_all_underlying_session_items()\n" + CALL
)
ROLLBACK_READ = "            previous_items = await self._get_all_underlying_session_items()\n"
#: skipped unless the history is what was sent, or a suffix of it: items that expired
#: meanwhile (a time-filtered store) are no write, and the rollback keeps them expired
ROLLBACK_READ_THEN_CHECK = ROLLBACK_READ + (
    "            kept = len(previous_items)\n"
    "            if previous_items != sent_history and not (\n"
    "                0 < kept < len(sent_history or []) and previous_items == sent_history[-kept:]\n"
    "            ):\n"
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
                Edit(SESSION, BUDGET_READ, BUDGET_READ_KEPT),
                Edit(SESSION, LEGACY_READ, LEGACY_READ_KEPT),
                Edit(SESSION, CALL, READ_THEN_CALL),
                Edit(SESSION, ROLLBACK_READ, ROLLBACK_READ_THEN_CHECK),
            ),
            anchors=((SESSION, "        snapshot: _CompactionSnapshot | None = None\n"),),
        ),
    ),
)
