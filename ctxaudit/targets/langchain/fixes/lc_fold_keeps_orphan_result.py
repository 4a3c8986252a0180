"""LC-FOLD-KEEPS-ORPHAN-RESULT (C1): once the release has placed the cut, it moves back
until every kept tool result has the AI message that asked for it in the kept tail too,
however the results came back (late, out of order, interleaved)."""

from ctxaudit.fixes import Edit, Fix, Form

SUMMARIZATION = "langchain/agents/middleware/summarization.py"
CUTOFF = (
    "    def _find_safe_cutoff(self, messages: list[AnyMessage], messages_to_keep: int) -> int:\n"
)

FIX = Fix(
    finding="LC-FOLD-KEEPS-ORPHAN-RESULT",
    why="the cut moves back to the earliest AI message a kept tool result answers, until "
    "no kept result's call is summarized",
    forms=(
        Form(
            versions="*",
            edits=(
                Edit(
                    SUMMARIZATION,
                    CUTOFF,
                    "    @staticmethod\n"
                    "    def _keep_calls_with_results(messages: list[AnyMessage], cutoff_index: int) -> int:\n"
                    '        """Move the cutoff back until every kept ToolMessage\'s AIMessage is kept."""\n'
                    "        while 0 < cutoff_index < len(messages):\n"
                    "            answered = {\n"
                    "                m.tool_call_id for m in messages[cutoff_index:] if isinstance(m, ToolMessage)\n"
                    "            }\n"
                    "            askers = [\n"
                    "                i\n"
                    "                for i in range(cutoff_index)\n"
                    '                if answered & {c.get("id") for c in getattr(messages[i], "tool_calls", None) or []}\n'
                    "            ]\n"
                    "            if not askers:\n"
                    "                break\n"
                    "            cutoff_index = askers[0]\n"
                    "        return cutoff_index\n"
                    "\n" + CUTOFF,
                ),
                Edit(
                    SUMMARIZATION,
                    "        return self._find_safe_cutoff_point(messages, target_cutoff)\n",
                    "        return self._keep_calls_with_results(\n"
                    "            messages, self._find_safe_cutoff_point(messages, target_cutoff)\n"
                    "        )\n",
                ),
                Edit(
                    SUMMARIZATION,
                    "        return self._find_safe_cutoff_point(messages, cutoff_candidate)\n",
                    "        return self._keep_calls_with_results(\n"
                    "            messages, self._find_safe_cutoff_point(messages, cutoff_candidate)\n"
                    "        )\n",
                ),
            ),
        ),
    ),
)
