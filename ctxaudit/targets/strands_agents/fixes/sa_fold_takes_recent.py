"""SA-FOLD-TAKES-RECENT (C1): a cut that the tool pairs move forward into the newest
preserve_recent_messages moves back before the pair instead (the nearest cut at or
before the oldest message kept that splits no pair), or folds nothing."""

from ctxaudit.fixes import Edit, Fix, Form

SUMMARIZING = "strands/agent/conversation_manager/summarizing_conversation_manager.py"

ADJUST = (
    "        messages_to_summarize_count = self._adjust_split_point_for_tool_pairs(\n"
    "            agent.messages, messages_to_summarize_count\n"
    "        )\n"
)

FIX = Fix(
    finding="SA-FOLD-TAKES-RECENT",
    why="the newest preserve_recent_messages are never summarized: the cut moves back "
    "before a tool pair that would carry it into them",
    forms=(
        Form(
            versions=">=1.40.0",
            edits=(
                Edit(
                    SUMMARIZING,
                    ADJUST,
                    ADJUST
                    + "        # Never into the recent messages always kept: cut before the pair instead\n"
                    "        kept_from = len(agent.messages) - self.preserve_recent_messages\n"
                    "        if messages_to_summarize_count > kept_from:\n"
                    "            messages_to_summarize_count = next(\n"
                    "                (\n"
                    "                    cut\n"
                    "                    for cut in range(kept_from, 0, -1)\n"
                    "                    if self._adjust_split_point_for_tool_pairs(agent.messages, cut) == cut\n"
                    "                ),\n"
                    "                0,\n"
                    "            )\n",
                ),
            ),
        ),
    ),
)
