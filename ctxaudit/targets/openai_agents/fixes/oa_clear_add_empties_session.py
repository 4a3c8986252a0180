"""OA-CLEAR-ADD-EMPTIES-SESSION (S7): the compacted output is computed before the store
is touched, and the clear and add run under a rollback that restores the history read
just before them, whatever ended the write: an error, or the task cancelled while the
store had committed (the lockstep's "cancelled" case)."""

from ctxaudit.fixes import Edit, Fix, Form

SESSION = "agents/memory/openai_responses_compaction_session.py"

CLEAR_FIRST = (
    "        await self.underlying_session.clear_session()\n"
    "        output_items: list[TResponseInputItem] = []\n"
)
NO_CLEAR_YET = "        output_items: list[TResponseInputItem] = []\n"
ADD = (
    "        if output_items:\n"
    "            await self.underlying_session.add_items(output_items)\n"
    "\n"
    "        self._compaction_candidate_items = select_compaction_candidate_items(output_items)\n"
)
REPLACE_WITH_ROLLBACK = (
    "        previous = await self.underlying_session.get_items()\n"
    "        try:\n"
    "            await self.underlying_session.clear_session()\n"
    "            if output_items:\n"
    "                await self.underlying_session.add_items(output_items)\n"
    "        except BaseException:  # a cancelled write too\n"
    "            await self.underlying_session.clear_session()\n"
    "            await self.underlying_session.add_items(previous)\n"
    "            raise\n"
    "\n"
    "        self._compaction_candidate_items = select_compaction_candidate_items(output_items)\n"
)

FIX = Fix(
    finding="OA-CLEAR-ADD-EMPTIES-SESSION",
    why="the clear and the add of the compacted output run under a rollback",
    forms=(
        Form(
            versions="<0.8.0",
            edits=(
                Edit(SESSION, CLEAR_FIRST, NO_CLEAR_YET),
                Edit(SESSION, ADD, REPLACE_WITH_ROLLBACK),
            ),
        ),
    ),
)
