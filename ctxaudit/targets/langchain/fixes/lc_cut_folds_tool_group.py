"""LC-CUT-FOLDS-TOOL-GROUP (C1): a cut that lands on a tool result moves back to the AI
message that asked for it, so the group is kept whole instead of summarized."""

from ctxaudit.fixes import Edit, Fix, Form

SUMMARIZATION = "langchain/agents/middleware/summarization.py"

FIX = Fix(
    finding="LC-CUT-FOLDS-TOOL-GROUP",
    why="the cut moves back to the AI message whose tool call the result at the cut answers",
    forms=(
        Form(
            versions="*",
            edits=(
                Edit(
                    SUMMARIZATION,
                    "        while cutoff_index < len(messages) and isinstance(messages[cutoff_index], ToolMessage):\n"
                    "            cutoff_index += 1\n",
                    "        if cutoff_index < len(messages) and isinstance(messages[cutoff_index], ToolMessage):\n"
                    "            call_id = messages[cutoff_index].tool_call_id\n"
                    "            for i in range(cutoff_index - 1, -1, -1):\n"
                    '                calls = getattr(messages[i], "tool_calls", None) or []\n'
                    '                if any(call.get("id") == call_id for call in calls):\n'
                    "                    return i\n"
                    "        while cutoff_index < len(messages) and isinstance(messages[cutoff_index], ToolMessage):\n"
                    "            cutoff_index += 1\n",
                ),
            ),
        ),
    ),
)
