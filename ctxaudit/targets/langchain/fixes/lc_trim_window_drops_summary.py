"""LC-TRIM-WINDOW-DROPS-SUMMARY (S6): when the summary's trim window holds no human
message, the trim keeps the window's newest messages all the same, so the summary model
is asked, instead of the history being replaced by a placeholder."""

from ctxaudit.fixes import Edit, Fix, Form

SUMMARIZATION = "langchain/agents/middleware/summarization.py"

FIX = Fix(
    finding="LC-TRIM-WINDOW-DROPS-SUMMARY",
    why="a trim window with no human message keeps its newest messages (start_on dropped)",
    forms=(
        Form(
            versions="*",
            edits=(
                Edit(
                    SUMMARIZATION,
                    "            return cast(\n"
                    '                "list[AnyMessage]",\n'
                    "                trim_messages(\n"
                    "                    messages,\n"
                    "                    max_tokens=self.trim_tokens_to_summarize,\n"
                    "                    token_counter=self.token_counter,\n"
                    '                    start_on="human",\n'
                    '                    strategy="last",\n'
                    "                    allow_partial=True,\n"
                    "                    include_system=True,\n"
                    "                ),\n"
                    "            )\n",
                    "            window: dict[str, Any] = {\n"
                    '                "max_tokens": self.trim_tokens_to_summarize,\n'
                    '                "token_counter": self.token_counter,\n'
                    '                "strategy": "last",\n'
                    '                "allow_partial": True,\n'
                    '                "include_system": True,\n'
                    "            }\n"
                    '            trimmed = trim_messages(messages, start_on="human", **window)\n'
                    "            if not trimmed:  # no human message in the window: its newest anyway\n"
                    "                trimmed = trim_messages(messages, **window)\n"
                    '            return cast("list[AnyMessage]", trimmed)\n',
                ),
            ),
        ),
    ),
)
