"""LS-INTERRUPT-TURN-LOST (S6): an interrupted /v1/streaming_query turn is written by
whichever comes first, the interrupt callback (its own task) or the stream's
``CancelledError`` handler. When the handler wins, its write runs in the cancelled
request scope and is cancelled (LS-HANGUP-TURN-LOST's cause: this fix requires that
one, which stores the turn in a shielded scope); when the callback wins, the handler
ends the stream at once and the callback's write is still running. The fix keeps the
callback's task in the guard and has the handler wait for it (shielded) before the
stream ends, so the turn is stored whichever wins."""

from ctxaudit.fixes import Edit, Fix, Form
from ctxaudit.targets.lightspeed.fixes.trees import RELEASE_06

_WAIT = (
    "        elif len(persist_guard) > 1:  # the interrupt callback is storing the turn\n"
    "            with anyio.CancelScope(shield=True):\n"
    "                await persist_guard[1]\n"
)
_CALLBACK = Edit(
    "src/utils/stream_interrupts.py",
    "        guard[0] = True\n        full_text, _ = build_interrupted_response(",
    "        guard[0] = True\n"
    "        guard.append(asyncio.current_task())  # the handler waits for this write\n"
    "        full_text, _ = build_interrupted_response(",
)
_GUARD = Edit(
    "src/utils/stream_interrupts.py",
    "    guard: list[bool] = [False]\n",
    "    guard: list[Any] = [False]\n",
)
_YIELD = "        yield serialize_event(\n            TokenStreamPayload.create(\n"
_YIELD_06 = '        yield stream_event(\n            {"id": turn_summary.next_chunk_id, "token": suffix},\n'

FIX = Fix(
    finding="LS-INTERRUPT-TURN-LOST",
    why="the stream's cancellation handler waits for the interrupt callback's write before it ends",
    requires=("LS-HANGUP-TURN-LOST",),
    forms=(
        Form(
            versions=RELEASE_06,
            edits=(
                _GUARD,
                _CALLBACK,
                Edit("src/utils/agents/streaming.py", _YIELD, _WAIT + _YIELD),
                Edit("src/app/endpoints/streaming_query.py", _YIELD_06, _WAIT + _YIELD_06),
            ),
        ),
        Form(
            versions="*",
            edits=(
                _GUARD,
                _CALLBACK,
                Edit("src/utils/agents/streaming.py", _YIELD, _WAIT + _YIELD),
            ),
        ),
    ),
)
# ruff: noqa: E501  (edits quote the target's lines verbatim)
