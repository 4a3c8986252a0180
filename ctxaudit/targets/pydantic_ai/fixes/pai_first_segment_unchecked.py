"""PAI-FIRST-SEGMENT-UNCHECKED (B3): the first request of a continued response is
checked against the token limits before its continuation is requested, as every later
one is (and as 2.40.0 does)."""

from ctxaudit.fixes import Edit, Fix, Form

GRAPH = "pydantic_ai/_agent_graph.py"
FIRST = (
    "            if response is None:\n                response = new_response\n            else:\n"
)
CHECKED = (
    "            if response is None:\n"
    "                response = new_response\n"
    "                if response.state == 'suspended':\n"
    "                    try:\n"
    "                        _check_continuation_usage(run_context, response.usage)\n"
    "                    except BaseException:\n"
    "                        await cancel_suspended_job(model, response)\n"
    "                        raise\n"
    "            else:\n"
)

FIX = Fix(
    finding="PAI-FIRST-SEGMENT-UNCHECKED",
    why="model_request runs the continuation check on a suspended first response too",
    forms=(Form(versions="*", edits=(Edit(GRAPH, FIRST, CHECKED),)),),
)
