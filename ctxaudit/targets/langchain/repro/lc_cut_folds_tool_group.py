"""LC-CUT-FOLDS-TOOL-GROUP: keep=("messages", 2) cuts inside a tool group; the AI message
and its three results must be kept together, not summarized together.
Exit 1 when it reproduces."""

import sys

from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

summarizer = GenericFakeChatModel(messages=iter([AIMessage("SUMMARY")]))
middleware = SummarizationMiddleware(summarizer, trigger=("messages", 5), keep=("messages", 2))
calls = [{"name": "t", "args": {}, "id": c} for c in "abc"]
messages = [
    HumanMessage("h0", id="h0"),
    AIMessage("a0", id="a0"),
    HumanMessage("h1", id="h1"),
    AIMessage("", id="a1", tool_calls=calls),
    *[ToolMessage(c, tool_call_id=c, id=f"t{c}") for c in "abc"],
]
update = middleware.before_model({"messages": messages}, None)
kept = [m.id for m in update["messages"][2:]]
print("kept after the summary:", kept)
if "a1" not in kept:
    print("BROKEN: the AI message with tool calls and its results were summarized away")
    sys.exit(1)
