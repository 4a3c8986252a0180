"""langchain #34517 (fixed by #34607): the summary prompt must hold the folded messages'
text, not their Python repr with every metadata field (usage_metadata,
response_metadata ...), which inflates it about 2.5 times past what the token counter
measured and overflows the summary model's window. Exit 1 when the prompt holds the
metadata."""

import sys

from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage

prompts = []


class Summarizer(GenericFakeChatModel):
    def _generate(self, messages, *args, **kwargs):
        prompts.append("\n".join(str(m.content) for m in messages))
        return super()._generate(messages, *args, **kwargs)


middleware = SummarizationMiddleware(
    Summarizer(messages=iter([AIMessage("the summary")])),
    trigger=("messages", 6),
    keep=("messages", 2),
)
usage = {"input_tokens": 120, "output_tokens": 8, "total_tokens": 128}
messages = []
for i in range(3):
    messages += [
        HumanMessage(f"question {i}"),
        AIMessage(f"answer {i}", usage_metadata=usage, response_metadata={"model": "m"}),
    ]
if middleware.before_model({"messages": messages}, None) is None or not prompts:
    print("ctxaudit: no fold happened, the program did not run its case")
    sys.exit(2)
fields = ("usage_metadata", "response_metadata", "additional_kwargs")
leaked = [k for k in fields if k in prompts[0]]
print(f"summary prompt: {len(prompts[0])} characters; metadata fields in it: {leaked}")
if leaked:
    print("BROKEN: the summary model is sent the messages' repr, metadata and all")
    sys.exit(1)
