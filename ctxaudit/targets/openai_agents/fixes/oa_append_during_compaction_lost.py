"""OA-APPEND-DURING-COMPACTION-LOST (S3/S6): the stored history is read whole just before
the compact call and again after it, and the replacement is skipped when the two differ:
another writer wrote meanwhile. Both reads are whole, so the comparison depends neither
on the store's retrieval window nor on the candidate cache, and holds with or without
the other fixes (OA-WINDOW-HIDES-HISTORY's changes what the compact call is sent, not
these reads). This closes the window of the HTTP call; a complete fix compares and
replaces in one store transaction, as 0.23.1's native suffix replacement does.

The forms follow the text: 0.7.0 has no retrieval window (``get_items()`` is the whole
history), 0.22.0 takes the mutation lock only around the replacement (the check follows
the call), 0.22.3 holds it throughout (the check is at the rollback read, the last
read before the replacement). From 0.23 on this code is the manual path, whose fix is
OA-MANUAL-COMPACTION-LOSES-WRITES'; no form here applies there."""

from ctxaudit.fixes import Edit, Fix, Form

SESSION = "agents/memory/openai_responses_compaction_session.py"

CALL = "        compacted = await self.client.responses.compact(**compact_kwargs)\n"
SKIP = (
    '{i}logger.warning("skip: history changed during compaction")\n'
    "{i}self._compaction_candidate_items = self._session_items = None\n"
    "{i}return\n"
)


def read_call_check(read: str) -> str:
    """The compact call between two whole reads of the history, skipped when they differ."""
    return (
        f"        sent_history = await {read}\n"
        + CALL
        + f"        if await {read} != sent_history:\n"
        + SKIP.format(i=" " * 12)
    )


#: what tells the trees apart: 0.7.0's one-line signature; before 0.22.3 the candidate
#: read takes no Runner reader
SIGNATURE_07 = "    async def run_compaction(self, args: OpenAIResponsesCompactionArgs | None = None) -> None:\n"
ENSURE_BEFORE_0223 = "        compaction_candidate_items, session_items = await self._ensure_compaction_candidates()\n"
READ_ALL = "self._get_all_underlying_session_items()"
ROLLBACK_READ = f"        previous_items = await {READ_ALL}\n        try:\n"
ROLLBACK_READ_THEN_CHECK = (
    f"        previous_items = await {READ_ALL}\n"
    "        if previous_items != sent_history:\n" + SKIP.format(i=" " * 12) + "        try:\n"
)

FIX = Fix(
    finding="OA-APPEND-DURING-COMPACTION-LOST",
    why="the replacement is skipped when the stored history changed during the compact call",
    forms=(
        Form(
            versions="<0.8.0",
            edits=(Edit(SESSION, CALL, read_call_check("self.underlying_session.get_items()")),),
            anchors=((SESSION, SIGNATURE_07),),
        ),
        Form(
            versions=">=0.8.0,<0.22.3",
            edits=(Edit(SESSION, CALL, read_call_check(READ_ALL)),),
            anchors=((SESSION, ENSURE_BEFORE_0223), (SESSION, READ_ALL)),
        ),
        Form(
            versions=">=0.22.3,<0.23.0",
            edits=(
                Edit(SESSION, CALL, f"        sent_history = await {READ_ALL}\n" + CALL),
                Edit(SESSION, ROLLBACK_READ, ROLLBACK_READ_THEN_CHECK),
            ),
        ),
    ),
)
