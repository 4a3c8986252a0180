"""LS-CONTINUATION-NOT-COMPACTED (C1): /v1/responses compacts only requests that name a
conversation, not one that continues from previous_response_id (the tree still knows
its conversation). The fix makes a continuation eligible, and a compacted one drops
previous_response_id (its explicit input already carries the conversation), so the turn
is stored with its summary marker like any compacted turn."""

from ctxaudit.fixes import Edit, Fix, Form
from ctxaudit.targets.lightspeed.fixes.trees import MAIN, RELEASE_06, RELEASE_07

_COMPACTED = (
    "        if compaction.compacted:\n"
    "            compacted_original_input = compaction.original_input\n"
)

FIX = Fix(
    finding="LS-CONTINUATION-NOT-COMPACTED",
    why="a /v1/responses continuation is compacted too, sent without previous_response_id",
    forms=(
        Form(
            # the 0.6 and 0.7 lines have the same lines (verified on 0.6.0, 0.7.0rc1)
            versions=frozenset({MAIN, *RELEASE_06, *RELEASE_07}),
            edits=(
                Edit(
                    "src/app/endpoints/responses.py",
                    "        and not api_params.previous_response_id\n",
                    "",
                ),
                Edit(
                    "src/app/endpoints/responses.py",
                    _COMPACTED,
                    _COMPACTED
                    + "            api_params = api_params.model_copy(\n"
                    + '                update={"previous_response_id": None}\n'
                    + "            )\n",
                ),
            ),
        ),
    ),
)
