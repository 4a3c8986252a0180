"""PAI-FIRST-SEGMENT-UNCHECKED: the continuation of a response is requested although
the response's first request already passed a token limit.

The first request pauses (as Anthropic's pause_turn or OpenAI's background mode do) and
reports 20 input tokens, over an input_tokens_limit of 10. The run must stop there; a
second request to the model is a request made past the limit. Exit 1 when the model
receives it.
"""

import sys

from pydantic_ai import Agent
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.usage import RequestUsage, UsageLimits

requests = []


def model(messages, info):
    requests.append(1)
    usage = RequestUsage(input_tokens=20, output_tokens=1)
    if len(requests) == 1:
        return ModelResponse(
            parts=[TextPart("half ")], usage=usage, state="suspended", provider_response_id="a"
        )
    return ModelResponse(parts=[TextPart("done")], usage=usage, provider_response_id="b")


try:
    Agent(FunctionModel(model)).run_sync("go", usage_limits=UsageLimits(input_tokens_limit=10))
    print("the run completed")
except UsageLimitExceeded as exc:
    print(f"stopped: {str(exc).split('. Consider')[0]}")
print(f"requests the model received: {len(requests)} (the first already had 20 input tokens)")
sys.exit(1 if len(requests) > 1 else 0)
