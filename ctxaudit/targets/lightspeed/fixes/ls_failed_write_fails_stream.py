"""LS-FAILED-WRITE-FAILS-STREAM (S7): a streamed /v1/responses request writes before
its stream starts (a compacted one its summary marker, a blocked one its refusal turn);
when the conversation store refuses, the error escapes as HTTP 500 instead of a stream
that ends normally. The fix logs a failed marker write and goes on (the turn's own
write reports the failure: a blocking request still fails), and the streamed refusal's
write failure is logged, not raised. Whatever the store raised: the conversation helper
maps only the OGX client's own errors to an HTTPException, and a store that fails inside
OGX (a locked database) reaches the tree as the store's own error (the first form caught
HTTPException alone; the mutation profile's examples showed it on the fully fixed main)."""

from ctxaudit.fixes import Edit, Fix, Form
from ctxaudit.targets.lightspeed.fixes.trees import MAIN, RELEASE_06, RELEASE_07

_MARKER = "    await _write_summary_marker(client, conversation_id, summary.summary_text)\n"
_BLOCKED = (
    "        generator = shield_violation_generator(api_params, context)\n"
    "        await _persist_blocked_response_turn(api_params, context)\n"
)

FIX = Fix(
    finding="LS-FAILED-WRITE-FAILS-STREAM",
    why="a failed marker write is logged, and a streamed refusal's failed write ends nothing",
    forms=(
        Form(
            # the 0.6 and 0.7 lines have the same lines (verified on 0.6.0, 0.7.0rc1)
            versions=frozenset({MAIN, *RELEASE_06, *RELEASE_07}),
            edits=(
                Edit(
                    "src/utils/conversation_compaction.py",
                    _MARKER,
                    "    try:\n    "
                    + _MARKER
                    + "    except Exception:  # pylint: disable=broad-except\n"
                    '        logger.warning("compaction: writing the summary marker failed", exc_info=True)\n',
                ),
                Edit(
                    "src/app/endpoints/responses.py",
                    _BLOCKED,
                    "        generator = shield_violation_generator(api_params, context)\n"
                    "        try:\n"
                    "            await _persist_blocked_response_turn(api_params, context)\n"
                    "        except Exception:  # pylint: disable=broad-except  # the stream still answers; nothing is kept\n"
                    '            logger.warning("storing the blocked turn failed", exc_info=True)\n',
                ),
            ),
        ),
    ),
)
# ruff: noqa: E501  (edits quote the target's lines verbatim)
