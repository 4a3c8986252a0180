"""LS-HANGUP-TURN-LOST (S6): when the client hangs up in the middle of a stream, the
generator's ``CancelledError`` handler starts to store the partial turn, but it runs in
the request's cancelled scope (Starlette cancels it on the disconnect), so the
conversation write is cancelled at its first await. The fix runs that write in a
shielded anyio cancel scope: the request ends once the turn is stored. (``asyncio.shield``
is not enough: the handler is cancelled again at once and the request ends while the
write is still running, before its assistant item is stored.) 0.6 has a second copy of
the handler in ``streaming_query.py``.

``/v1/responses`` (streamed) has no such handler: a hang-up cancels its generator and
nothing is stored (OGX stores a turn only when inference ran to the end). Its part of
the fix catches the cancellation in ``response_generator``, and, when the request is
stored, appends the input (the original input in compacted mode) and the text streamed
so far with the tree's interruption notice (``build_interrupted_response``, as
/v1/streaming_query stores a turn cut short), and records the conversation as a
completed stream does (``_store_response_query_results``: without it a conversation
that such a request started is unknown to the next one), in the same shielded scope,
then lets the cancellation go on."""

from ctxaudit.fixes import Edit, Fix, Form
from ctxaudit.targets.lightspeed.fixes.trees import MAIN, RELEASE_06, RELEASE_07

_STREAMING = "src/utils/agents/streaming.py"
_RESPONSES = "src/app/endpoints/responses.py"


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


def _responses(api: str) -> tuple[Edit, ...]:
    """``/v1/responses`` streamed: store the partial turn when the client hangs up
    (``api``: the package the tree's ``OpenAIResponseMessage`` comes from)."""
    yield_line = "            yield f\"event: {chunk.type or 'error'}\\ndata: {json.dumps(chunk_dict)}\\n\\n\"\n"
    handler = (
        "    except asyncio.CancelledError:  # the client hung up: store what it was sent\n"
        "        if api_params.store:\n"
        f"            from {api} import OpenAIResponseMessage\n\n"
        "            from utils.stream_interrupts import build_interrupted_response\n\n"
        "            user_input = (\n"
        "                context.compacted_original_input\n"
        "                if context.compacted_original_input is not None\n"
        "                else api_params.input\n"
        "            )\n"
        "            # as /v1/streaming_query stores an interrupted answer: with its notice\n"
        "            text, _ = build_interrupted_response(streamed)\n"
        "            partial = [\n"
        '                OpenAIResponseMessage(role="assistant", content=text)\n'
        "            ] if streamed else []\n"
        "            with anyio.CancelScope(shield=True):\n"
        "                try:\n"
        "                    await append_turn_items_to_conversation(\n"
        "                        context.client, api_params.conversation, user_input, partial\n"
        "                    )\n"
        "                    # the conversation's record, as a completed stream leaves it\n"
        "                    _store_response_query_results(\n"
        "                        api_params, context, turn_summary, datetime.now(UTC), None\n"
        "                    )\n"
        "                except Exception:  # pylint: disable=broad-except\n"
        '                    logger.exception("Failed to store the turn of a stream cut short")\n'
        "        raise\n"
    )
    return (
        Edit(
            _RESPONSES,
            "\nimport json\nimport time\n",
            "\nimport asyncio\nimport json\nimport time\n\nimport anyio\n",
        ),
        Edit(
            _RESPONSES,
            "    server_mcp_output_indices: set[int] = set()\n",
            "    server_mcp_output_indices: set[int] = set()\n"
            "    streamed: list[str] = []  # the text deltas sent so far\n",
        ),
        Edit(
            _RESPONSES,
            yield_line + "    except Exception:\n",
            '            if chunk.type == "response.output_text.delta":\n'
            '                streamed.append(str(chunk_dict.get("delta", "")))\n'
            + yield_line
            + handler
            + "    except Exception:\n",
        ),
    )


FIX = Fix(
    finding="LS-HANGUP-TURN-LOST",
    why=(
        "the cancellation handler stores the partial turn in a shielded anyio cancel scope; "
        "/v1/responses (streamed) gets such a handler"
    ),
    forms=(
        Form(
            versions=frozenset({MAIN, *RELEASE_07}),
            edits=(
                *_shielded(_STREAMING, "background_topic_summary_tasks"),
                *_responses("ogx_api"),
            ),
        ),
        Form(
            versions=RELEASE_06,
            edits=(
                *_shielded(_STREAMING, "background_topic_summary_tasks"),
                *_shielded(
                    "src/app/endpoints/streaming_query.py", "_background_topic_summary_tasks"
                ),
                *_responses("llama_stack_api"),
            ),
        ),
    ),
)
# ruff: noqa: E501  (edits quote the target's lines verbatim)
