"""LC-SUMMARY-FAILURE-FABRICATED: the summarizer fails; the step must fail and the
history stay as it was. Exit 1 when it reproduces."""

import sys

from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.exceptions import ModelAuthenticationError
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage


class Down(GenericFakeChatModel):
    def _generate(self, *args, **kwargs):
        raise ModelAuthenticationError("summarizer down")


middleware = SummarizationMiddleware(
    Down(messages=iter([])), trigger=("messages", 4), keep=("messages", 2)
)
messages = [HumanMessage(f"h{i}") if i % 2 == 0 else AIMessage(f"a{i}") for i in range(6)]
try:
    update = middleware.before_model({"messages": messages}, None)
except ModelAuthenticationError as exc:
    print("raised:", exc)
    sys.exit(0)
print("returned:", [m.type for m in update["messages"]], repr(update["messages"][1].content))
print("BROKEN: four messages replaced by a summary that is the error's text")
sys.exit(1)
