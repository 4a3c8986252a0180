"""PAI-PER-REQUEST-READS-CHAIN-SUM (B2): a merged continuation records the input of its
last request, the one sent the whole context, and the per-request limit reads that.

Where the commit check already reads ``context_input_tokens(response)`` (2.6x), recording
it is enough; where it reads ``response.usage.input_tokens``, the check reads the record.
"""

from ctxaudit.fixes import Edit, Fix, Form

CONTINUATION = "pydantic_ai/models/_continuation.py"
GRAPH = "pydantic_ai/_agent_graph.py"
METADATA_MERGE = (
    "    if existing.metadata:\n"
    "        merged = replace(merged, metadata={**existing.metadata, **(merged.metadata or {})})\n"
)
RECORD = (
    "    if merged.usage is not new.usage:  # summed: the last request measures the context\n"
    "        own = ((new.metadata or {}).get(_PYDANTIC_AI_METADATA_KEY) or {}).get('context_input_tokens')\n"
    "        namespace = {**((merged.metadata or {}).get(_PYDANTIC_AI_METADATA_KEY) or {})}\n"
    "        namespace['context_input_tokens'] = new.usage.input_tokens if own is None else own\n"
    "        merged = replace(merged, metadata={**(merged.metadata or {}), _PYDANTIC_AI_METADATA_KEY: namespace})\n"
)
OLD_CHECK = "            ctx.deps.usage_limits.check_per_request_input_tokens(response.usage.input_tokens)\n"
NEW_CHECK = (
    "            recorded = ((response.metadata or {}).get('__pydantic_ai__') or {}).get('context_input_tokens')\n"
    "            ctx.deps.usage_limits.check_per_request_input_tokens(\n"
    "                response.usage.input_tokens if recorded is None else recorded\n"
    "            )\n"
)

FIX = Fix(
    finding="PAI-PER-REQUEST-READS-CHAIN-SUM",
    why="merge_responses records the last request's input tokens on a response whose "
    "usage it summed, and the per-request limit reads that record",
    forms=(
        Form(
            versions="*",
            edits=(
                Edit(CONTINUATION, METADATA_MERGE, METADATA_MERGE + RECORD),
                Edit(GRAPH, OLD_CHECK, NEW_CHECK),
            ),
        ),
        Form(
            versions="*",
            edits=(Edit(CONTINUATION, METADATA_MERGE, METADATA_MERGE + RECORD),),
            anchors=((GRAPH, "check_per_request_input_tokens(context_input_tokens(response))"),),
        ),
    ),
)
