"""LS-QUERY-COMPACTED-FAILS (S9/S6): main's /v1/query casts the explicit input of
compacted mode (a list) to the agent's prompt string; the agent run fails before the LLM
is called, and the turn is never stored (``retrieve_agent_response`` takes the original
input and leaves it unused). The fix sends the explicit input as the request's input and
stores the turn against the original input (``ls_compacted_agent``). 0.6 has the same
cast in ``retrieve_agent_response``, which returns the summary at once: its form stores
the turn before returning it. The 0.7 line is 0.6's shape on OGX (the cast assigned to
``prompt`` first)."""

from ctxaudit.fixes import Edit, Fix, Form
from ctxaudit.targets.lightspeed.fixes.ls_compacted_agent import explicit_input, store_turn
from ctxaudit.targets.lightspeed.fixes.trees import MAIN, RELEASE_06, RELEASE_07

_QUERY = "src/utils/agents/query.py"
_RUN = "            run_result = await agent.run(prompt)\n"
_BUILT = (
    "            rag_id_mapping=rag_id_mapping,\n        )\n\n"
    "        # Emit inference completed event after successful summary build\n"
)
_IMPORT = "from utils.conversations import append_turn_items_to_conversation\n"
#: 0.6: the same cast, at another indent; the summary is returned at once
_RUN_06 = "        run_result = await agent.run(cast(str, responses_params.input))\n"
_RETURN_06 = (
    "    return build_turn_summary_from_agent_run(\n        run_result,\n"
    "        model_id=responses_params.model,\n        endpoint_path=endpoint_path,\n"
    "        vector_store_ids=vector_store_ids,\n        rag_id_mapping=rag_id_mapping,\n"
    "    )\n"
)
#: 0.7: the cast is assigned to ``prompt`` first, at 0.6's indent
_RUN_07 = "        run_result = await agent.run(prompt)\n"


def _store_summary(indent: str) -> str:
    """Lines that store the compacted turn: the original input and the summary's answer."""
    return store_turn(
        indent, "client", "responses_params.conversation", "_original_input",
        "turn_summary.llm_response",
    )  # fmt: skip


def _store_before_return(api: str, run_old: str, run_new: str) -> tuple[Edit, ...]:
    """The 0.6 and 0.7 lines' edits: explicit input before the run, the turn stored
    before the summary is returned (``api``: where ``OpenAIResponseMessage`` comes from)."""
    return (
        Edit(_QUERY, _IMPORT, _IMPORT + f"from {api} import OpenAIResponseMessage\n"),
        Edit(_QUERY, run_old, run_new),
        Edit(
            _QUERY,
            _RETURN_06,
            _RETURN_06.replace("    return ", "    turn_summary = ", 1)
            + "    if _original_input is not None:  # compacted: the server does not store it\n"
            + _store_summary("        ")
            + "    return turn_summary\n",
        ),
    )


FIX = Fix(
    finding="LS-QUERY-COMPACTED-FAILS",
    why="compacted /v1/query sends the explicit input to the LLM and stores the turn itself",
    forms=(
        Form(
            versions=frozenset({MAIN}),
            edits=(
                Edit(_QUERY, _IMPORT, _IMPORT + "from ogx_api import OpenAIResponseMessage\n"),
                Edit(_QUERY, _RUN, explicit_input("            ") + _RUN),
                Edit(
                    _QUERY,
                    _BUILT,
                    _BUILT.split("\n\n")[0]
                    + "\n"
                    + "        if _original_input is not None:  # compacted: OGX does not store it\n"
                    + _store_summary("            ")
                    + "\n"
                    + _BUILT.split("\n\n")[1],
                ),
            ),
        ),
        Form(
            versions=RELEASE_06,
            edits=_store_before_return(
                "llama_stack_api",
                _RUN_06,
                "        prompt = cast(str, responses_params.input)\n"
                + explicit_input("        ")
                + "        run_result = await agent.run(prompt)\n",
            ),
        ),
        Form(
            versions=RELEASE_07,
            edits=_store_before_return("ogx_api", _RUN_07, explicit_input("        ") + _RUN_07),
        ),
    ),
)
# ruff: noqa: E501  (edits quote the target's lines verbatim)
