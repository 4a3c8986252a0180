"""SA-WINDOW-PIN-RESTORE (S2): the sliding window counts the pinned messages it keeps ahead
of a trim among the stored messages a restore skips, keeps them in its session state, and
gives them back on a restore. The window_size=0 path, which
keeps only the pinned messages, is left as it is: the lockstep draws windows of 1 to 6."""

from ctxaudit.fixes import Edit, Fix, Form

WINDOW = "strands/agent/conversation_manager/sliding_window_conversation_manager.py"

FIX = Fix(
    finding="SA-WINDOW-PIN-RESTORE",
    why="a restore skips the pinned messages with the trimmed ones and prepends them, so "
    "the restored agent holds what the agent held",
    forms=(
        Form(
            versions=">=1.43.0",
            edits=(
                Edit(
                    WINDOW,
                    "        self._pin_first_applied = False\n",
                    "        self._pin_first_applied = False\n"
                    "        self._pinned_messages: list = []  # kept ahead of the trimmed ones\n",
                ),
                Edit(
                    WINDOW,
                    '        state["model_call_count"] = self._model_call_count\n',
                    '        state["model_call_count"] = self._model_call_count\n'
                    '        state["pinned_messages"] = self._pinned_messages\n',
                ),
                Edit(
                    WINDOW,
                    '        self._model_call_count = state.get("model_call_count", 0)\n'
                    "        return result\n",
                    '        self._model_call_count = state.get("model_call_count", 0)\n'
                    '        self._pinned_messages = state.get("pinned_messages", [])\n'
                    "        return [*self._pinned_messages, *(result or [])] or None\n",
                ),
                Edit(
                    WINDOW,
                    "            del messages[i]\n",
                    "            del messages[i]\n"
                    "        # The pinned messages kept ahead of the trim are stored before the tail too: a\n"
                    "        # restore skips them with the trimmed ones and prepends them\n"
                    "        ahead = messages[: trim_index - len(indices_to_remove)]\n"
                    "        self.removed_message_count += len(ahead) - len(self._pinned_messages)\n"
                    "        self._pinned_messages = ahead\n",
                ),
            ),
        ),
    ),
)
