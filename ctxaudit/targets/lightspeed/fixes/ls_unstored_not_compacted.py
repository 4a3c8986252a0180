"""LS-UNSTORED-NOT-COMPACTED (C1): /v1/responses compacts only stored requests, so a
store=false request over the threshold sends the whole conversation. The fix makes it
eligible too, and a store=false compaction writes no summary marker (nothing of an
unstored request is kept: the model's conversation does not change)."""

from ctxaudit.fixes import Edit, Fix, Form
from ctxaudit.targets.lightspeed.fixes.trees import MAIN, RELEASE_06, RELEASE_07

_PERSIST = (
    "                    await _persist_new_summary_chunk(\n"
    "                        client,\n                        conversation_id,\n"
    "                        summary,\n                        cache,\n"
    "                        user_id,\n                        skip_user_id_check,\n"
    "                    )\n"
)

FIX = Fix(
    finding="LS-UNSTORED-NOT-COMPACTED",
    why="store=false /v1/responses requests are compacted too, without writing a marker",
    forms=(
        Form(
            # the 0.6 and 0.7 lines have the same lines (verified on 0.6.0, 0.7.0rc1)
            versions=frozenset({MAIN, *RELEASE_06, *RELEASE_07}),
            edits=(
                Edit("src/app/endpoints/responses.py", "        and api_params.store\n", ""),
                Edit(
                    "src/utils/conversation_compaction.py",
                    _PERSIST,
                    "                    if params.store:  # an unstored request keeps nothing\n"
                    + "".join("    " + line for line in _PERSIST.splitlines(keepends=True)),
                ),
            ),
        ),
    ),
)
