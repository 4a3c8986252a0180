"""SA-PINS-FEWER-THAN-PIN-FIRST (S6): the first pin_first messages are pinned as they
come. The manager pins at each try to reduce until the conversation has held all of
them, not only at its first (which may come before it holds pin_first messages)."""

from ctxaudit.fixes import Edit, Fix, Form

SUMMARIZING = "strands/agent/conversation_manager/summarizing_conversation_manager.py"
WINDOW = "strands/agent/conversation_manager/sliding_window_conversation_manager.py"

APPLIED = "            self._pin_first_applied = True\n"


def _pinned_for_good(messages: str) -> str:
    return (
        "            # pinned for good once the conversation has held every message to pin\n"
        f"            self._pin_first_applied = len({messages}) >= self.pin_first\n"
    )


FIX = Fix(
    finding="SA-PINS-FEWER-THAN-PIN-FIRST",
    why="the first pin_first messages are pinned however few the conversation held at the "
    "manager's first try to reduce it",
    forms=(
        Form(
            versions=">=1.43.0",
            edits=(
                Edit(SUMMARIZING, APPLIED, _pinned_for_good("agent.messages")),
                Edit(WINDOW, APPLIED, _pinned_for_good("messages")),
            ),
        ),
    ),
)
