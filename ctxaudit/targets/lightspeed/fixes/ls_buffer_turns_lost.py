"""LS-BUFFER-TURNS-LOST (C1): a compaction keeps the newest turns verbatim, and they are
stored *before* the summary marker it writes; the next compacted request takes only the
items after the last marker as the recent turns, so the kept turns are neither
summarized nor sent. The fix finds what each marker covers by replaying the fold that
wrote it: the tree's own ``partition_conversation`` on the items the marker before it
left uncovered, under the buffer settings and the token budget of the request, as
``apply_compaction`` calls it. So a buffer the degrading guard shrank is read as the
fold left it. A marker does not record what it covers: a fold under other buffer
settings (an operator's change between two folds) is misread, which is
LS-MARKER-COVERAGE-UNRECORDED."""

from ctxaudit.fixes import Edit, Fix, Form
from ctxaudit.targets.lightspeed.fixes.trees import (
    MAIN,
    MARKER_READING_PIN,
    RELEASE_06,
    RELEASE_07,
)

_FILE = "src/utils/conversation_compaction.py"

_READER_OLD = (
    "def _items_after_last_marker(items: list[Any]) -> list[Any]:\n"
    '    """Return the conversation items that follow the last summary marker.\n'
    "\n"
    "    These are the recent turns kept verbatim. When there is no marker the whole\n"
    "    list is returned (no compaction has happened yet).\n"
    '    """\n'
    "    last = -1\n"
    "    for index, item in enumerate(items):\n"
    "        if is_marker_item(item):\n"
    "            last = index\n"
    "    return items[last + 1 :]\n"
)
_READER_NEW = (
    "def _items_after_last_marker(\n"
    "    items: list[Any],\n"
    "    buffer_budget: Optional[int] = None,\n"
    "    encoding_name: str = DEFAULT_ENCODING_NAME,\n"
    ") -> list[Any]:\n"
    '    """Return the conversation items no summary marker covers, markers left out.\n'
    "\n"
    "    A fold keeps the newest turns verbatim and writes its marker after them: a\n"
    "    marker covers the items before it but those. Replaying the fold on the items\n"
    "    the previous marker left uncovered tells which (``buffer_budget``: the\n"
    "    degrading guard's budget; ``None``, no guard). When there is no marker the\n"
    "    whole list is returned (no compaction has happened yet).\n"
    '    """\n'
    "    covered = 0  # the items before this position are summarized\n"
    "    for index, item in enumerate(items):\n"
    "        if not is_marker_item(item):\n"
    "            continue\n"
    "        positions = [p for p in range(covered, index) if not is_marker_item(items[p])]\n"
    "        _, kept = partition_conversation(\n"
    "            [items[p] for p in positions],\n"
    "            available_budget_tokens=(\n"
    "                buffer_budget if buffer_budget is not None else sys.maxsize\n"
    "            ),\n"
    "            buffer_turns=configuration.compaction.buffer_turns,\n"
    "            encoding_name=encoding_name,\n"
    "        )\n"
    "        covered = positions[len(positions) - len(kept)] if kept else index + 1\n"
    "    return [item for item in items[covered:] if not is_marker_item(item)]\n"
)
_STATE_SIGNATURE_OLD = (
    "    conversation_id: str,\n"
    "    skip_user_id_check: bool,\n"
    ") -> tuple[list[str], list[ConversationSummary], list[Any]]:\n"
)
_STATE_SIGNATURE_NEW = (
    "    conversation_id: str,\n"
    "    skip_user_id_check: bool,\n"
    "    buffer_budget: Optional[int] = None,\n"
    "    encoding_name: str = DEFAULT_ENCODING_NAME,\n"
    ") -> tuple[list[str], list[ConversationSummary], list[Any]]:\n"
)
_STATE_READ_OLD = "    recent_items = _items_after_last_marker(items)\n"
_STATE_READ_NEW = (
    "    recent_items = _items_after_last_marker(items, buffer_budget, encoding_name)\n"
)
_CALL_OLD = (
    "        summaries, cached_summaries, recent_items = _load_compaction_state(\n"
    "            items, cache, user_id, conversation_id, skip_user_id_check\n"
    "        )\n"
    "\n"
    "        context_window = get_context_window(model, inference_config)\n"
)
_CALL_NEW = (
    "        context_window = get_context_window(model, inference_config)\n"
    "        buffer_budget = (\n"
    "            int(context_window * compaction_config.buffer_max_ratio)\n"
    "            if context_window is not None\n"
    "            else None\n"
    "        )\n"
    "        summaries, cached_summaries, recent_items = _load_compaction_state(\n"
    "            items,\n"
    "            cache,\n"
    "            user_id,\n"
    "            conversation_id,\n"
    "            skip_user_id_check,\n"
    "            buffer_budget,\n"
    "            encoding_name,\n"
    "        )\n"
)

FIX = Fix(
    finding="LS-BUFFER-TURNS-LOST",
    why="the recent turns are those no marker covers, the kept turns before a marker included",
    forms=(
        Form(
            # the 0.6 and 0.7 lines have the same lines (verified on 0.6.0, 0.7.0rc1)
            versions=frozenset({MAIN, *RELEASE_06, *RELEASE_07}),
            edits=(
                Edit(_FILE, "import asyncio\n", "import asyncio\nimport sys\n"),
                Edit(_FILE, _READER_OLD, _READER_NEW),
                Edit(_FILE, _STATE_SIGNATURE_OLD, _STATE_SIGNATURE_NEW),
                Edit(_FILE, _STATE_READ_OLD, _STATE_READ_NEW),
                Edit(_FILE, _CALL_OLD, _CALL_NEW),
            ),
            pins=(MARKER_READING_PIN,),
        ),
    ),
)
