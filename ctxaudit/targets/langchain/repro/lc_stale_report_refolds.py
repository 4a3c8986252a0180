"""LC-STALE-REPORT-REFOLDS: after a fold, the kept AI message still carries the report
of a prompt the fold removed; the next call before any new model answer must not fold
the short conversation again. Exit 1 when it reproduces."""

import sys

from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.messages.utils import count_tokens_approximately
from langgraph.graph.message import add_messages


class Model(GenericFakeChatModel):
    pass


summaries = Model(messages=iter([AIMessage("S1"), AIMessage("S2")]))
middleware = SummarizationMiddleware(summaries, trigger=("tokens", 1000), keep=("messages", 2))
usage = {"input_tokens": 1500, "output_tokens": 5, "total_tokens": 1505}
state = [
    HumanMessage("h0 " * 500, id="h0"),
    AIMessage("a0", id="a0"),
    HumanMessage("h1", id="h1"),
    AIMessage("a1", id="a1", usage_metadata=usage, response_metadata={"model_provider": "model"}),
]
state = add_messages(state, [HumanMessage("h2", id="h2")])
first = middleware.before_model({"messages": state}, None)  # 1505 reported: folds
if first is None:
    print("no fold on the report: this release does not read reported counts")
    sys.exit(0)
state = add_messages(state, first["messages"])
print("after the fold:", [m.id for m in state][1:], count_tokens_approximately(state), "tokens")
# the model call fails (an outage); the user asks again
state = add_messages(state, [HumanMessage("h3", id="h3")])
second = middleware.before_model({"messages": state}, None)
if second is not None:
    print("BROKEN: folded again on", count_tokens_approximately(state), "tokens, by a stale report")
    sys.exit(1)
print("no second fold")
