"""OA-WRAPPER-WRITE-DURING-COMPACTION-LOST (S3/S6): one lock serializes the compaction
session's compaction (snapshot, compact call, replacement) with the writes made through
it (add_items, pop_item, clear_session), so a write made while the compact call is in
flight waits and runs against the compacted history, as 0.22.3 on does. 0.7.0 has no
lock: each public method becomes a locked call of the unchanged body, renamed. 0.22.0
has the lock around each write and the replacement alone: run_compaction becomes a
locked call of its body, renamed, and the replacement runs without taking it again."""

from ctxaudit.fixes import Edit, Fix, Form

SESSION = "agents/memory/openai_responses_compaction_session.py"


def locked(signature: str, name: str, call: str, returns: bool = False) -> Edit:
    """``async def name(...)`` becomes a locked call of ``_name_unlocked``."""
    old = f"    async def {name}({signature}"
    ret = "return " if returns else ""
    new = (
        f"    async def {name}({signature}"
        f"        async with self._mutation_lock:\n"
        f"            {ret}await self._{name}_unlocked({call})\n\n"
        f"    async def _{name}_unlocked({signature}"
    )
    return Edit(SESSION, old, new)


#: 0.22.0: run_compaction up to its first line (what 0.22.3 on delegates instead)
RUN_022 = (
    "    async def run_compaction(\n"
    "        self,\n"
    "        args: OpenAIResponsesCompactionArgs | None = None,\n"
    "        *,\n"
    "        wrapper: RunContextWrapper[Any] | None = None,\n"
    "    ) -> None:\n"
    '        """Run compaction using responses.compact API.\n'
    "\n"
    "        When a run context is provided, the billed compaction request contributes to\n"
    "        that run's usage totals.\n"
    '        """\n'
)
FIRST_LINE_022 = '        if args and args.get("response_id"):\n'
LOCKED_RUN_022 = RUN_022 + (
    "        async with self._mutation_lock:\n"
    "            await self._run_compaction_unlocked(args, wrapper=wrapper)\n"
    "\n"
    "    async def _run_compaction_unlocked(\n"
    "        self,\n"
    "        args: OpenAIResponsesCompactionArgs | None,\n"
    "        *,\n"
    "        wrapper: RunContextWrapper[Any] | None,\n"
    "    ) -> None:\n"
)
REPLACE_LOCKED_022 = (
    "        async with self._mutation_lock:\n"
    "            previous_items = await self._get_all_underlying_session_items()\n"
    "            await self._replace_underlying_session_items(\n"
    "                output_items=output_items,\n"
    "                previous_items=previous_items,\n"
    "            )\n"
    "            self._compaction_candidate_items = select_compaction_candidate_items(output_items)\n"
    "            self._session_items = output_items\n"
)
REPLACE_HELD_022 = (
    "        # run_compaction holds the mutation lock from the snapshot to here\n"
    "        previous_items = await self._get_all_underlying_session_items()\n"
    "        await self._replace_underlying_session_items(\n"
    "            output_items=output_items,\n"
    "            previous_items=previous_items,\n"
    "        )\n"
    "        self._compaction_candidate_items = select_compaction_candidate_items(output_items)\n"
    "        self._session_items = output_items\n"
)

FIX = Fix(
    finding="OA-WRAPPER-WRITE-DURING-COMPACTION-LOST",
    why="the compaction and the writes through the compaction session run under one lock",
    forms=(
        Form(
            versions="<0.8.0",
            edits=(
                Edit(SESSION, "import logging\n", "import asyncio\nimport logging\n"),
                Edit(
                    SESSION,
                    "        self._compaction_candidate_items: list[TResponseInputItem] | None = None\n",
                    "        self._mutation_lock = asyncio.Lock()\n"
                    "        self._compaction_candidate_items: list[TResponseInputItem] | None = None\n",
                ),
                locked(
                    "self, args: OpenAIResponsesCompactionArgs | None = None) -> None:\n",
                    "run_compaction",
                    "args",
                ),
                locked("self, items: list[TResponseInputItem]) -> None:\n", "add_items", "items"),
                locked("self) -> TResponseInputItem | None:\n", "pop_item", "", returns=True),
                locked("self) -> None:\n", "clear_session", ""),
            ),
        ),
        Form(
            versions=">=0.8.0,<0.22.3",
            edits=(
                Edit(SESSION, RUN_022 + FIRST_LINE_022, LOCKED_RUN_022 + FIRST_LINE_022),
                Edit(SESSION, REPLACE_LOCKED_022, REPLACE_HELD_022),
            ),
        ),
    ),
)
