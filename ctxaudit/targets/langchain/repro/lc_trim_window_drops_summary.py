"""LC-TRIM-WINDOW-DROPS-SUMMARY: the folded messages end in a long tool-using stretch
with no human message in the last trim_tokens_to_summarize tokens (the default, 4000);
the trim keeps nothing, and the history is replaced by a placeholder no model wrote
(upstream #39261, closed, still on 1.5.2). The summary model must still be asked to
summarize them. Exit 1 when the placeholder replaces it."""

import sys

from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

asked = []


class Summarizer(GenericFakeChatModel):
    def _generate(self, messages, *args, **kwargs):
        asked.append(messages)
        return super()._generate(messages, *args, **kwargs)


summarizer = Summarizer(messages=iter([AIMessage("the summary")] * 2))
middleware = SummarizationMiddleware(summarizer, trigger=("messages", 10), keep=("messages", 2))
messages = [HumanMessage("read the logs")]
for i in range(5):  # one agentic turn: each tool result about 1000 tokens
    call = {"name": "read", "args": {"part": i}, "id": f"c{i}"}
    messages += [AIMessage("", tool_calls=[call]), ToolMessage("log " * 1000, tool_call_id=f"c{i}")]
messages += [AIMessage("read them all"), HumanMessage("and now?")]
update = middleware.before_model({"messages": messages}, None)
if update is None:
    print("ctxaudit: no fold happened, the program did not run its case")
    sys.exit(2)
summary = next(m for m in update["messages"][1:] if m.type == "human").content
print(f"summary model called {len(asked)} time(s); summary message: {summary!r}")
if not asked:
    print("BROKEN: 11 messages replaced by a placeholder; the summary model was never asked")
    sys.exit(1)
