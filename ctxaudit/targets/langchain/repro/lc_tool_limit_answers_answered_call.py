"""LC-TOOL-LIMIT-ANSWERS-ANSWERED-CALL: ToolCallLimitMiddleware answers a tool call that
is already answered (upstream #39815, open). A run limited to one tool call first calls a
tool, then gives its structured answer through ToolStrategy's output tool, which the agent
answers itself; the limit adds a second tool message for that call, and providers reject
two results for one call. Exit 1 when a call has two tool messages."""

import sys
from collections import Counter

from langchain.agents import create_agent
from langchain.agents.middleware import ToolCallLimitMiddleware
from langchain.agents.structured_output import ToolStrategy
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from pydantic import BaseModel


class Answer(BaseModel):
    text: str


class Model(GenericFakeChatModel):
    def bind_tools(self, tools, **kwargs):
        return self


@tool
def search(q: str) -> str:
    """Search."""
    return "found"


replies = [
    AIMessage("", tool_calls=[{"name": "search", "args": {"q": "x"}, "id": "c1"}]),
    AIMessage("", tool_calls=[{"name": "Answer", "args": {"text": "done"}, "id": "c2"}]),
]
agent = create_agent(
    Model(messages=iter(replies)),
    tools=[search],
    response_format=ToolStrategy(Answer),
    middleware=[ToolCallLimitMiddleware(run_limit=1, exit_behavior="continue")],
)
out = agent.invoke({"messages": [HumanMessage("go")]})
answers = Counter(m.tool_call_id for m in out["messages"] if m.type == "tool")
print("messages:", [m.type for m in out["messages"]], "tool messages per call:", dict(answers))
if any(n > 1 for n in answers.values()):
    print("BROKEN: one tool call has two tool messages")
    sys.exit(1)
