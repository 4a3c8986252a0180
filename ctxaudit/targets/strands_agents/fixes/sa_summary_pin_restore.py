"""SA-SUMMARY-PIN-RESTORE (S2): the summarizing manager counts the pinned messages it keeps
ahead of the summary among the stored messages a restore skips, keeps them in its session
state, and gives them back with the summary on a restore."""

from ctxaudit.fixes import Edit, Fix, Form

SUMMARIZING = "strands/agent/conversation_manager/summarizing_conversation_manager.py"

FIX = Fix(
    finding="SA-SUMMARY-PIN-RESTORE",
    why="a restore skips the pinned messages with the folded ones and prepends them with the "
    "summary, so the restored agent holds what the agent held",
    forms=(
        Form(
            versions=">=1.43.0",
            edits=(
                Edit(
                    SUMMARIZING,
                    "        self._pin_first_applied = False\n",
                    "        self._pin_first_applied = False\n"
                    "        self._pinned_messages: list[Message] = []  # kept ahead of the summary\n",
                ),
                Edit(
                    SUMMARIZING,
                    '        self._summary_message = state.get("summary_message")\n'
                    "        return [self._summary_message] if self._summary_message else None\n",
                    '        self._summary_message = state.get("summary_message")\n'
                    '        self._pinned_messages = state.get("pinned_messages", [])\n'
                    "        if not self._summary_message:\n"
                    "            return None\n"
                    "        return [*self._pinned_messages, self._summary_message]\n",
                ),
                Edit(
                    SUMMARIZING,
                    '        return {"summary_message": self._summary_message, **super().get_state()}\n',
                    "        return {\n"
                    '            "summary_message": self._summary_message,\n'
                    '            "pinned_messages": self._pinned_messages,\n'
                    "            **super().get_state(),\n"
                    "        }\n",
                ),
                Edit(
                    SUMMARIZING,
                    "        agent.messages[:] = protected_to_preserve + [self._summary_message] + remaining_messages\n",
                    "        agent.messages[:] = protected_to_preserve + [self._summary_message] + remaining_messages\n"
                    "        # The pinned messages newly kept ahead of the summary are stored before the tail\n"
                    "        # too: a restore skips them with the folded ones and prepends them\n"
                    "        self.removed_message_count += len(protected_to_preserve) - len(self._pinned_messages)\n"
                    "        self._pinned_messages = protected_to_preserve\n",
                ),
            ),
        ),
    ),
)
