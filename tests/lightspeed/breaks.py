"""Hand-made breaks of lightspeed-stack's main: each must fail the property it names.

A break is one exact edit of one source file (``old`` must occur exactly
once, or the break no longer applies and says so). Each is applied to a copy
of the tree and the in-environment lockstep runs on the copy: it must fail,
and its message must name the break's property. These are how the suite's
properties were seen to fail on lightspeed-stack (the history test shows S6 on
real commits as well).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

RESPONSES = "src/app/endpoints/responses.py"
COMPACTION = "src/utils/conversation_compaction.py"
A2A = "src/app/endpoints/a2a.py"

_APPEND_COMPACTED = """\
    if context.compacted_original_input is not None:
        await append_turn_items_to_conversation(
            context.client,
            api_params.conversation,
            context.compacted_original_input,
            output,
        )
"""


@dataclass(frozen=True)
class Break:
    name: str
    prop: str
    what: str
    file: str
    old: str
    new: str


BREAKS: tuple[Break, ...] = (
    Break(
        "remove-compacted-write",
        "S6",
        "the compacted /v1/responses turn is not written (LCORE-3883's shape)",
        RESPONSES,
        _APPEND_COMPACTED,
        "    if context.compacted_original_input is not None:\n        pass\n    if False:\n"
        "        pass\n",
    ),
    Break(
        "store-explicit-input",
        "S2",
        "the compacted turn is stored with the explicit input instead of the original",
        RESPONSES,
        _APPEND_COMPACTED,
        _APPEND_COMPACTED.replace("context.compacted_original_input,", "api_params.input,"),
    ),
    Break(
        "write-twice",
        "S3",
        "the compacted turn is written twice",
        RESPONSES,
        _APPEND_COMPACTED,
        _APPEND_COMPACTED + _APPEND_COMPACTED.split("\n", 1)[1],
    ),
    Break(
        "drop-marker",
        "S6",
        "the summary marker is not written",
        COMPACTION,
        "    await _write_summary_marker(client, conversation_id, summary.summary_text)\n",
        "    pass\n",
    ),
    Break(
        "threshold-at-equality",
        "C1",
        "compaction fires at the threshold (>= instead of >)",
        COMPACTION,
        "    return estimated_tokens > threshold and estimated_tokens > config.token_floor\n",
        "    return estimated_tokens >= threshold and estimated_tokens > config.token_floor\n",
    ),
    Break(
        "store-ignores-flag",
        "S1",
        "a /v1/responses request with store=false is stored",
        RESPONSES,
        "    api_params = ResponsesApiParams.model_validate(updated_request.model_dump())\n",
        "    api_params = ResponsesApiParams.model_validate(updated_request.model_dump())\n"
        "    api_params.store = True\n",
    ),
    Break(
        "blocked-turn-lost",
        "S6",
        "a blocked /v1/responses turn (input and refusal) is not written",
        RESPONSES,
        "    if api_params.store:\n"
        "        moderation_result = cast(ShieldModerationBlocked, context.moderation_result)\n",
        "    if False:\n"
        "        moderation_result = cast(ShieldModerationBlocked, context.moderation_result)\n",
    ),
    Break(
        "compaction-visible",
        "S9",
        "a compacted /v1/responses request answers 413 instead of the LLM's answer",
        RESPONSES,
        "        if compaction.compacted:\n"
        "            compacted_original_input = compaction.original_input\n",
        "        if compaction.compacted:\n"
        "            raise HTTPException(status_code=413, detail='compacted')\n",
    ),
    Break(
        "a2a-turn-not-stored",
        "S6",
        "an A2A turn is not stored: the executor asks OGX not to store it",
        A2A,
        "                stream=True,\n                store=True,\n",
        "                stream=True,\n                store=False,\n",
    ),
)


class BreakDoesNotApply(Exception):
    pass


def apply(source_root: Path, dest: Path, brk: Break) -> Path:
    """A copy of the tree at ``source_root`` in ``dest`` with ``brk`` applied."""
    shutil.copytree(source_root, dest, ignore=shutil.ignore_patterns(".git", "__pycache__"))
    target = dest / brk.file
    text = target.read_text()
    if text.count(brk.old) != 1:
        raise BreakDoesNotApply(
            f"break {brk.name}: the text to replace occurs {text.count(brk.old)} times "
            f"in {brk.file} (expected once)"
        )
    target.write_text(text.replace(brk.old, brk.new))
    return dest
