"""LS-A2A-NONE-PARAMS-SWALLOWED (S6/S9/C1): the A2A executor of trees whose
``prepare_responses_params`` leaves ``max_infer_iters`` unset hands llama-stack every
request parameter, None included (``model_dump()``); llama-stack 0.6.0 asserts
``max_infer_iters`` is not None, its stream ends in an error event the executor does not
know, and the task is published completed with nothing in it. The fix leaves out the
parameters that are None, as ``/v1/query`` and ``/v1/streaming_query`` already do, so
the server applies its own default."""

from ctxaudit.fixes import Edit, Fix, Form

_A2A = "src/app/endpoints/a2a.py"
_CREATE = "            stream = await client.responses.create(**responses_params.model_dump())\n"

FIX = Fix(
    finding="LS-A2A-NONE-PARAMS-SWALLOWED",
    why="the A2A executor leaves out the request parameters that are None, as the others do",
    forms=(
        Form(
            versions=frozenset({"41d55b98"}),
            edits=(
                Edit(
                    _A2A,
                    _CREATE,
                    "            stream = await client.responses.create(\n"
                    "                **responses_params.model_dump(exclude_none=True)\n"
                    "            )\n",
                ),
            ),
        ),
    ),
)
