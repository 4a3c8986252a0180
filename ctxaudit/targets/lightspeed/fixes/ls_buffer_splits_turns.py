"""LS-BUFFER-SPLITS-TURNS (C1): the fold keeps the last ``2 * buffer_turns`` messages,
so a turn whose input has several items is split (its first items folded into the
summary, the rest sent verbatim). The fix keeps the last ``buffer_turns`` *turns*: a
turn starts at a message that is not the assistant's, after an assistant message."""

from ctxaudit.fixes import Edit, Fix, Form
from ctxaudit.targets.lightspeed.fixes.trees import (
    MAIN,
    MARKER_READING_PIN,
    RELEASE_06,
    RELEASE_07,
)

_COMPACTION = "src/utils/compaction.py"
_HELPER = (
    "def _turn_starts(items: list[Any]) -> list[int]:\n"
    '    """Positions of each turn\'s first message: its input may be several items."""\n'
    "    starts: list[int] = []\n"
    '    previous = "assistant"\n'
    "    for index, item in enumerate(items):\n"
    "        if not is_message_item(item):\n"
    "            continue\n"
    '        role = getattr(item, "role", "user")\n'
    '        if role != "assistant" and previous == "assistant":\n'
    "            starts.append(index)\n"
    "        previous = role\n"
    "    return starts\n\n\n"
)
_SPLIT = (
    "        if recent_msg_count > len(msg_indices):\n"
    "            # Not enough messages to satisfy this candidate buffer\n"
    "            # size; smaller candidates will be tried next iteration.\n"
    "            continue\n"
    "        split_at = msg_indices[-recent_msg_count]\n"
)

FIX = Fix(
    finding="LS-BUFFER-SPLITS-TURNS",
    why="the fold keeps the last buffer_turns turns, whatever the number of their items",
    forms=(
        Form(
            # the 0.6 and 0.7 lines have the same lines (verified on 0.6.0, 0.7.0rc1)
            versions=frozenset({MAIN, *RELEASE_06, *RELEASE_07}),
            edits=(
                Edit(
                    _COMPACTION,
                    "def _message_indices(items: list[Any]) -> list[int]:\n",
                    _HELPER + "def _message_indices(items: list[Any]) -> list[int]:\n",
                ),
                Edit(
                    _COMPACTION,
                    _SPLIT,
                    "        starts = _turn_starts(items)  # whole turns, not message pairs\n"
                    "        if candidate_turns > len(starts):\n"
                    "            continue\n"
                    "        split_at = starts[-candidate_turns]\n",
                ),
            ),
            pins=(MARKER_READING_PIN,),
        ),
    ),
)
