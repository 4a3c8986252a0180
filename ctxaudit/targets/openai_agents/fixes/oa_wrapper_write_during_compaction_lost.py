"""OA-WRAPPER-WRITE-DURING-COMPACTION-LOST (S3/S6): one lock serializes the compaction
session's compaction (snapshot, compact call, replacement) with the writes made through
it (add_items, pop_item, clear_session), so a write made while the compact call is in
flight waits and runs against the compacted history, as 0.22 on does. Each public method
becomes a locked call of the unchanged body, renamed."""

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
    ),
)
