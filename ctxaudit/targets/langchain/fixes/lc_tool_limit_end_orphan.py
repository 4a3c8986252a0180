"""LC-TOOL-LIMIT-END-ORPHAN (B3/S6): when the tool-call limit ends the run, the calls of
the limited tool that were still allowed are answered too (they will not run), so no
call of the last AI message is left without a tool message."""

from ctxaudit.fixes import Edit, Fix, Form

TOOL_CALL_LIMIT = "langchain/agents/middleware/tool_call_limit.py"

FIX = Fix(
    finding="LC-TOOL-LIMIT-END-ORPHAN",
    why="exit_behavior='end' adds an explanatory ToolMessage for each allowed call it stops",
    forms=(
        Form(
            versions="*",
            # the code that stops only the blocked calls (1.5.2 answers every pending call
            # in its own way, where this edit would answer the allowed ones twice)
            anchors=((TOOL_CALL_LIMIT, "Cannot end execution with other tool calls pending"),),
            edits=(
                Edit(
                    TOOL_CALL_LIMIT,
                    "            artificial_messages.append(AIMessage(content=final_msg_content))\n",
                    "            artificial_messages.extend(\n"
                    "                ToolMessage(\n"
                    "                    content=tool_msg_content,\n"
                    '                    tool_call_id=tool_call["id"],\n'
                    '                    name=tool_call.get("name"),\n'
                    '                    status="error",\n'
                    "                )\n"
                    "                for tool_call in allowed_calls\n"
                    "            )\n"
                    "            artificial_messages.append(AIMessage(content=final_msg_content))\n",
                ),
            ),
        ),
    ),
)
