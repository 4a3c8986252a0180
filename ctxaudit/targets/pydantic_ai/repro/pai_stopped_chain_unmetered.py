"""PAI-STOPPED-CHAIN-UNMETERED: a continued response stopped by a token limit leaves
its tokens out of the run's usage.

The response is continued once (the first request pauses, as Anthropic's pause_turn or
OpenAI's background mode do). Its two requests have 8 input tokens each; the run's
input_tokens_limit is 10, so the second one passes it and the run stops. Both requests
were made and billed: the usage the run metered into must hold 16 input tokens. Exit 1
when it holds fewer.
"""

import sys

from pydantic_ai import Agent
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.usage import RequestUsage, RunUsage, UsageLimits

billed = []


def model(messages, info):
    usage = RequestUsage(input_tokens=8, output_tokens=1)
    billed.append(usage.input_tokens)
    if len(billed) == 1:
        return ModelResponse(
            parts=[TextPart("half ")], usage=usage, state="suspended", provider_response_id="a"
        )
    return ModelResponse(parts=[TextPart("done")], usage=usage, provider_response_id="b")


usage = RunUsage()
try:
    Agent(FunctionModel(model)).run_sync(
        "go", usage=usage, usage_limits=UsageLimits(input_tokens_limit=10)
    )
    print("the run completed")
except UsageLimitExceeded as exc:
    print(f"stopped: {str(exc).split('. Consider')[0]}")
print(f"input tokens billed {sum(billed)} ({billed}), in the run's usage {usage.input_tokens}")
sys.exit(1 if usage.input_tokens < sum(billed) else 0)
