"""OA-WINDOW-HIDES-HISTORY (S6): the compaction session reads the whole stored history,
not the store's retrieval window, so the compact call gets exactly what a whole-history
replacement deletes and the decision hook counts every candidate. On 0.22.3 ``auto``
also falls back to ``input`` when the history is longer than the window: the response
chain holds only the window the model was sent."""

from ctxaudit.fixes import Edit, Fix, Form

SESSION = "agents/memory/openai_responses_compaction_session.py"

SUFFIX_READ = (
    "            items = await self.underlying_session.get_items(limit=limit)\n"
    "            complete = limit is not None and len(items) < limit\n"
)
SUFFIX_READ_ALL = (
    "            items = await self.underlying_session.get_items(\n"
    "                limit=_ALL_SESSION_ITEMS_LIMIT if limit is None else limit\n"
    "            )\n"
    "            complete = limit is not None and len(items) < limit\n"
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
    "            window is not None\n"
    "            and len(session_items) > window\n"
    '            and (requested_mode or self.compaction_mode) == "auto"\n'
    "        ):\n"
    '            resolved_mode = "input"  # the response chain holds only the window\n' + KWARGS
)

FIX = Fix(
    finding="OA-WINDOW-HIDES-HISTORY",
    why="the compaction session's history is read with no retrieval limit (and, on 0.22.3, "
    "auto compacts by input when the history is longer than the window)",
    forms=(
        Form(
            versions=">=0.23.0",
            edits=(Edit(SESSION, SUFFIX_READ, SUFFIX_READ_ALL),),
        ),
        Form(
            versions="<0.23.0",
            edits=(
                Edit(SESSION, WHOLE_READ, WHOLE_READ_ALL),
                Edit(SESSION, KWARGS, INPUT_UNDER_WINDOW),
            ),
        ),
    ),
)
