"""LC-FOLD-KEEPS-ORPHAN-RESULT: a fold keeps a tool result whose AI message it summarized.

Two shapes an agent run produces: two AI messages whose results both come back after the
second (interleaved), and a call answered after the user spoke again (late). Keeping the
newest two messages must keep each kept result's AI message too; a result without it is
rejected by the provider on the next call. Exit 1 when it reproduces."""

import sys

from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage


def call(id):
    return {"name": "t", "args": {}, "id": id}


shapes = {
    "interleaved": [
        HumanMessage("h0", id="h0"),
        AIMessage("", id="a1", tool_calls=[call("c1")]),
        AIMessage("", id="a2", tool_calls=[call("c2")]),
        ToolMessage("r1", tool_call_id="c1", id="t1"),
        ToolMessage("r2", tool_call_id="c2", id="t2"),
    ],
    "late": [
        HumanMessage("h0", id="h0"),
        AIMessage("", id="a1", tool_calls=[call("c1")]),
        HumanMessage("h1", id="h1"),
        ToolMessage("r1", tool_call_id="c1", id="t1"),
    ],
}
broken = False
for name, messages in shapes.items():
    summarizer = GenericFakeChatModel(messages=iter([AIMessage("SUMMARY")]))
    middleware = SummarizationMiddleware(summarizer, trigger=("messages", 3), keep=("messages", 2))
    update = middleware.before_model({"messages": messages}, None)
    kept = update["messages"][2:] if update else messages
    calls = {c["id"] for m in kept for c in getattr(m, "tool_calls", None) or []}
    orphans = [m.id for m in kept if isinstance(m, ToolMessage) and m.tool_call_id not in calls]
    print(f"{name}: kept after the summary {[m.id for m in kept]}, orphaned results {orphans}")
    broken = broken or bool(orphans)
if broken:
    print("BROKEN: a kept tool result's AI message was summarized away")
    sys.exit(1)
