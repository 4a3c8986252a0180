"""LS-HANGUP-TURN-LOST (S6): when the client hangs up in the middle of a stream, the
generator's ``CancelledError`` handler starts to store the partial turn, but it runs in
the request's cancelled scope (Starlette cancels it on the disconnect), so the
conversation write is cancelled at its first await. The fix runs that write in a
shielded anyio cancel scope: the request ends once the turn is stored. (``asyncio.shield``
is not enough: the handler is cancelled again at once and the request ends while the
write is still running, before its assistant item is stored.) 0.6 has a second copy of
the handler in ``streaming_query.py``."""

from ctxaudit.fixes import Edit, Fix, Form
from ctxaudit.fixes.ls_trees import MAIN, RELEASE_06, RELEASE_07

_STREAMING = "src/utils/agents/streaming.py"


def _indent(text: str) -> str:
    return "".join("    " + line for line in text.splitlines(keepends=True))


def _shielded(path: str, tasks: str) -> tuple[Edit, Edit]:
    call = (
        "            await persist_interrupted_turn(\n"
        "                context,\n                responses_params,\n"
        f"                turn_summary,\n                {tasks},\n"
        "                original_input,\n            )\n"
    )
    return (
        Edit(path, "\nimport asyncio\n", "\nimport asyncio\n\nimport anyio\n"),
        Edit(path, call, "            with anyio.CancelScope(shield=True):\n" + _indent(call)),
    )


FIX = Fix(
    finding="LS-HANGUP-TURN-LOST",
    why="the cancellation handler stores the partial turn in a shielded anyio cancel scope",
    forms=(
        Form(
            versions=frozenset({MAIN, *RELEASE_07}),
            edits=_shielded(_STREAMING, "background_topic_summary_tasks"),
        ),
        Form(
            versions=RELEASE_06,
            edits=(
                *_shielded(_STREAMING, "background_topic_summary_tasks"),
                *_shielded(
                    "src/app/endpoints/streaming_query.py", "_background_topic_summary_tasks"
                ),
            ),
        ),
    ),
)
# ruff: noqa: E501  (edits quote the target's lines verbatim)
