"""pydantic-ai #2978: with tool_calls_limit=1 the model asks for two tool calls at once.
The limit is checked before the calls run, so neither may run ("If the model returns
parallel tool calls that would exceed the limit, no tools will be executed"). Exit 1
when a tool ran anyway."""

import sys

from pydantic_ai import Agent
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.usage import UsageLimits

ran = []


def model(messages, info):
    if len(messages) == 1:
        return ModelResponse(
            parts=[ToolCallPart("search", {"q": "a"}), ToolCallPart("search", {"q": "b"})]
        )
    return ModelResponse(parts=[TextPart("done")])


agent = Agent(FunctionModel(model))


@agent.tool_plain
def search(q: str) -> str:
    ran.append(q)
    return "found"


try:
    agent.run_sync("go", usage_limits=UsageLimits(tool_calls_limit=1))
    outcome = "completed"
except UsageLimitExceeded as exc:
    outcome = f"UsageLimitExceeded: {exc}"
print(f"tool_calls_limit=1, two calls in one response: {len(ran)} ran -> {outcome}")
if ran:
    print("BROKEN: a tool ran although the batch was over the limit")
    sys.exit(1)
