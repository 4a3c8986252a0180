"""LC-TOOL-LIMIT-END-ORPHAN: an AI message asks for two calls of a tool limited to one
run call, with exit_behavior="end"; every call must be answered by a tool message (or,
as 1.3.14 documents, the run raises NotImplementedError). Exit 1 when it reproduces."""

import sys

from langchain.agents import create_agent
from langchain.agents.middleware import ToolCallLimitMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool


class Model(GenericFakeChatModel):
    def bind_tools(self, tools, **kwargs):
        return self


@tool
def search(q: str) -> str:
    """Search."""
    return "found"


calls = [{"name": "search", "args": {"q": "x"}, "id": c} for c in ("c1", "c2")]
model = Model(messages=iter([AIMessage("", tool_calls=calls), AIMessage("done")]))
limit = ToolCallLimitMiddleware(tool_name="search", run_limit=1, exit_behavior="end")
agent = create_agent(model, tools=[search], middleware=[limit])
try:
    out = agent.invoke({"messages": [HumanMessage("go")]})
except NotImplementedError as exc:
    print("raised NotImplementedError:", exc)
    sys.exit(0)
answered = {m.tool_call_id for m in out["messages"] if m.type == "tool"}
unanswered = [
    c["id"]
    for m in out["messages"]
    if m.type == "ai"
    for c in m.tool_calls
    if c["id"] not in answered
]
print("messages:", [m.type for m in out["messages"]], "unanswered calls:", unanswered)
if unanswered:
    print("BROKEN: the run ended with tool calls no tool message answers")
    sys.exit(1)
