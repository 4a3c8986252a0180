"""LS-A2A-COMPACTED-TURN-LOST (S6/C1): the A2A executor of main and of the 0.7 line
(the same code) compacts (writes the summary marker, drops the conversation from the
request), then runs the agent on the user's text alone and never stores the turn (0.6
called ``store_compacted_turn``). The fix sends the explicit input as the request's
input and, once the agent's run completes, stores the turn against the original input
(``ls_compacted_agent``)."""

from ctxaudit.fixes import Edit, Fix, Form
from ctxaudit.targets.lightspeed.fixes.ls_compacted_agent import explicit_input, store_turn
from ctxaudit.targets.lightspeed.fixes.trees import MAIN, RELEASE_07

_A2A = "src/app/endpoints/a2a.py"
_IMPORT = "from utils.conversation_compaction import apply_compaction_blocking\n"
_BUILD = (
    "            agent = build_agent(\n                client,\n                responses_params,\n"
    "                configuration,\n                shields=query_request.shield_ids,\n"
    "            )\n"
)
_PUBLISH = "        # Publish the final task result event\n"

FIX = Fix(
    finding="LS-A2A-COMPACTED-TURN-LOST",
    why="a compacted A2A message sends the explicit input and its completed turn is stored",
    forms=(
        Form(
            versions=frozenset({MAIN, *RELEASE_07}),
            edits=(
                Edit(
                    _A2A,
                    _IMPORT,
                    _IMPORT
                    + "from utils.conversations import append_turn_items_to_conversation\n"
                    + "from ogx_api import OpenAIResponseMessage\n",
                ),
                # compacted as the compaction's result says, not as the input's type
                # reads: lightspeed-stack's own tests hand the executor parameters
                # whose input is a mock (test_process_task_streaming_*)
                Edit(
                    _A2A,
                    _BUILD,
                    _BUILD + explicit_input("            ", when="compaction.compacted"),
                ),
                Edit(
                    _A2A,
                    _PUBLISH,
                    "        if compaction.compacted and self._run_result is not None:\n"
                    + store_turn(
                        "            ",
                        "client",
                        "responses_params.conversation",
                        "compaction.original_input",
                        "str(self._run_result.output)",
                    )
                    + "\n"
                    + _PUBLISH,
                ),
            ),
        ),
    ),
)
