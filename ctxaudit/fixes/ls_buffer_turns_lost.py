"""LS-BUFFER-TURNS-LOST (C1): a compaction keeps the last ``buffer_turns`` turns verbatim,
and they are stored *before* the summary marker it writes; the next compacted request
takes only the items after the last marker as the recent turns, so the kept turns are
neither summarized nor sent. The fix finds what each marker covers by replaying the
fold: the turns before a marker, less the ``buffer_turns`` it kept (a turn starts at a
message that is not the assistant's, after an assistant message). It assumes the fold
kept ``buffer_turns`` turns: a buffer the degrading guard shrank to fit the budget is
not recorded anywhere in the conversation (marker-only mode has no other record)."""

from ctxaudit.fixes import Edit, Fix, Form
from ctxaudit.fixes.ls_trees import MAIN, RELEASE_06, RELEASE_07

_OLD = (
    "    last = -1\n"
    "    for index, item in enumerate(items):\n"
    "        if is_marker_item(item):\n"
    "            last = index\n"
    "    return items[last + 1 :]\n"
)
_NEW = (
    "    keep = configuration.compaction.buffer_turns\n"
    "    covered = 0  # the items before this position are summarized\n"
    "    for index, item in enumerate(items):\n"
    "        if not is_marker_item(item):\n"
    "            continue\n"
    "        # the fold that wrote this marker kept the last `keep` turns before it\n"
    '        starts, previous = [], "assistant"\n'
    "        for position in range(covered, index):\n"
    "            entry = items[position]\n"
    "            if not is_message_item(entry) or is_marker_item(entry):\n"
    "                continue\n"
    '            role = getattr(entry, "role", "user")\n'
    '            if role != "assistant" and previous == "assistant":\n'
    "                starts.append(position)\n"
    "            previous = role\n"
    "        covered = starts[-keep] if 0 < keep <= len(starts) else index + 1\n"
    "    return [item for item in items[covered:] if not is_marker_item(item)]\n"
)

FIX = Fix(
    finding="LS-BUFFER-TURNS-LOST",
    why="the recent turns are those no marker covers, the kept turns before a marker included",
    forms=(
        Form(
            # the 0.6 and 0.7 lines have the same lines (verified on 0.6.0, 0.7.0rc1)
            versions=frozenset({MAIN, *RELEASE_06, *RELEASE_07}),
            edits=(Edit("src/utils/conversation_compaction.py", _OLD, _NEW),),
        ),
    ),
)
