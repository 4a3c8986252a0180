"""LC-STALE-REPORT-REFOLDS (C1): a fold records how many messages it kept; a provider
report is read only from an AI message written after the fold, since a kept one's
report is about a prompt the fold removed."""

from ctxaudit.fixes import Edit, Fix, Form

SUMMARIZATION = "langchain/agents/middleware/summarization.py"

FIX = Fix(
    finding="LC-STALE-REPORT-REFOLDS",
    why="the summary message records the number of messages kept, and the reported-count "
    "check skips AI messages among them",
    forms=(
        Form(
            versions="*",
            edits=(
                Edit(
                    SUMMARIZATION,
                    "        summary = self._create_summary(messages_to_summarize)\n"
                    "        new_messages = self._build_new_messages(summary)\n",
                    "        summary = self._create_summary(messages_to_summarize)\n"
                    "        new_messages = self._build_new_messages(summary)\n"
                    '        new_messages[0].additional_kwargs["lc_kept"] = len(preserved_messages)\n',
                ),
                Edit(
                    SUMMARIZATION,
                    "        summary = await self._acreate_summary(messages_to_summarize)\n"
                    "        new_messages = self._build_new_messages(summary)\n",
                    "        summary = await self._acreate_summary(messages_to_summarize)\n"
                    "        new_messages = self._build_new_messages(summary)\n"
                    '        new_messages[0].additional_kwargs["lc_kept"] = len(preserved_messages)\n',
                ),
                Edit(
                    SUMMARIZATION,
                    "        last_ai_message = next(\n"
                    "            (msg for msg in reversed(messages) if isinstance(msg, AIMessage)),\n"
                    "            None,\n"
                    "        )\n",
                    "        fresh = messages\n"
                    "        for i in range(len(messages) - 1, -1, -1):\n"
                    '            kept = messages[i].additional_kwargs.get("lc_kept")\n'
                    '            if messages[i].additional_kwargs.get("lc_source") == "summarization":\n'
                    "                fresh = messages[i + 1 + (kept or 0) :]\n"
                    "                break\n"
                    "        last_ai_message = next(\n"
                    "            (msg for msg in reversed(fresh) if isinstance(msg, AIMessage)),\n"
                    "            None,\n"
                    "        )\n",
                ),
            ),
        ),
    ),
)
