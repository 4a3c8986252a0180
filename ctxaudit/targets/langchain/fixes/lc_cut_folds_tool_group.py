"""LC-CUT-FOLDS-TOOL-GROUP (C1): a cut that lands on tool results moves back to the
nearest AI message that asked for one of them (as 1.3.x does), so the group is kept
whole instead of summarized; only where none did does it move forward past them."""

from ctxaudit.fixes import Edit, Fix, Form

SUMMARIZATION = "langchain/agents/middleware/summarization.py"

FIX = Fix(
    finding="LC-CUT-FOLDS-TOOL-GROUP",
    why="the cut moves back to the nearest AI message whose tool call a result of the run at "
    "the cut answers",
    forms=(
        Form(
            versions="*",
            edits=(
                Edit(
                    SUMMARIZATION,
                    "        while cutoff_index < len(messages) and isinstance(messages[cutoff_index], ToolMessage):\n"
                    "            cutoff_index += 1\n",
                    "        run = cutoff_index\n"
                    "        while run < len(messages) and isinstance(messages[run], ToolMessage):\n"
                    "            run += 1\n"
                    "        call_ids = {m.tool_call_id for m in messages[cutoff_index:run]}\n"
                    "        for i in range(cutoff_index - 1, -1, -1):\n"
                    '            calls = getattr(messages[i], "tool_calls", None) or []\n'
                    '            if call_ids & {call.get("id") for call in calls}:\n'
                    "                return i\n"
                    "        while cutoff_index < len(messages) and isinstance(messages[cutoff_index], ToolMessage):\n"
                    "            cutoff_index += 1\n",
                ),
            ),
        ),
    ),
)
