"""LS-STREAMING-QUERY-COMPACTED-FAILS (S9/S6): main's /v1/streaming_query casts the
explicit input of compacted mode (a list) to the agent's prompt string; the stream ends
with an error event, and a completed compacted turn is never stored
(``generate_agent_response`` uses the original input only when interrupted). The fix
sends the explicit input as the request's input and stores the completed turn against
the original input (a failed write is logged: a stream ends normally, S7). 0.6 has the
same lines; its form imports the message from llama-stack instead of OGX."""

from ctxaudit.fixes import Edit, Fix, Form
from ctxaudit.targets.lightspeed.fixes.ls_compacted_agent import explicit_input, store_turn
from ctxaudit.targets.lightspeed.fixes.trees import MAIN, RELEASE_06, RELEASE_07

_STREAMING = "src/utils/agents/streaming.py"
_RUN = (
    '    logger.debug("Starting agent streaming response processing")\n'
    "    async with agent.run_stream_events(prompt) as stream:\n"
)
_DONE = "    should_generate_topic_summary = (\n"
_IMPORT = "from utils.conversations import append_turn_items_to_conversation\n"


def _client(api: str) -> tuple[tuple[str, str], ...]:
    """The import of the client of ``api`` (OGX's or llama-stack's): which form a tree
    takes (the edited lines are the same in both)."""
    return ((_STREAMING, f"from {api.replace('_api', '_client')} import "),)


def _edits(api: str) -> tuple[Edit, ...]:
    """The edits, with ``api`` the package the tree's ``OpenAIResponseMessage`` comes from."""
    return (
        Edit(_STREAMING, _IMPORT, _IMPORT + f"from {api} import OpenAIResponseMessage\n"),
        Edit(_STREAMING, _RUN, explicit_input("    ") + _RUN),
        Edit(
            _STREAMING,
            _DONE,
            "    if original_input is not None:  # compacted: OGX does not store it\n"
            "        try:\n"
            + store_turn(
                "            ",
                "context.client",
                "responses_params.conversation",
                "original_input",
                "turn_summary.llm_response",
            )
            + "        except HTTPException:  # the stream still ends normally\n"
            + '            logger.warning("storing the compacted turn failed", exc_info=True)\n'
            + _DONE,
        ),
    )


FIX = Fix(
    finding="LS-STREAMING-QUERY-COMPACTED-FAILS",
    why="compacted /v1/streaming_query sends the explicit input and stores the completed turn",
    forms=(
        # the 0.7 line has main's lines (verified on 0.7.0rc1)
        Form(
            versions=frozenset({MAIN, *RELEASE_07}),
            edits=_edits("ogx_api"),
            anchors=_client("ogx_api"),
        ),
        # 0.6: the same lines; the server is llama-stack
        Form(
            versions=RELEASE_06,
            edits=_edits("llama_stack_api"),
            anchors=_client("llama_stack_api"),
        ),
    ),
)
# ruff: noqa: E501  (edits quote the target's lines verbatim)
