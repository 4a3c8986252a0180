"""LC-TOOL-LIMIT-ANSWERS-ANSWERED-CALL (B3/S6): the tool-call limit counts and answers
only the calls of the last AI message that no tool message answers yet (the agent
answers ToolStrategy's output tool itself), so no call gets two results."""

from ctxaudit.fixes import Edit, Fix, Form

TOOL_CALL_LIMIT = "langchain/agents/middleware/tool_call_limit.py"

PENDING = Edit(
    TOOL_CALL_LIMIT,
    "        if not last_ai_message or not last_ai_message.tool_calls:\n            return None\n",
    "        if not last_ai_message or not last_ai_message.tool_calls:\n"
    "            return None\n"
    "        answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}\n"
    '        pending = [tc for tc in last_ai_message.tool_calls if tc["id"] not in answered]\n'
    "        if not pending:\n"
    "            return None\n",
)
COUNTED = Edit(
    TOOL_CALL_LIMIT,
    "            last_ai_message.tool_calls, current_thread_count, current_run_count\n",
    "            pending, current_thread_count, current_run_count\n",
)

FIX = Fix(
    finding="LC-TOOL-LIMIT-ANSWERS-ANSWERED-CALL",
    why="calls a tool message already answers are neither counted nor answered again",
    forms=(
        Form(
            versions="*",
            edits=(
                PENDING,
                COUNTED,
                # 1.5.2's exit_behavior='end' answers every other pending call too
                Edit(
                    TOOL_CALL_LIMIT,
                    '                tc for tc in last_ai_message.tool_calls if tc["id"] not in blocked_ids\n',
                    '                tc for tc in pending if tc["id"] not in blocked_ids\n',
                ),
            ),
        ),
        Form(versions="*", edits=(PENDING, COUNTED)),
    ),
)
