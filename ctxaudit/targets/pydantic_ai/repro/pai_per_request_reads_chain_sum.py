"""PAI-PER-REQUEST-READS-CHAIN-SUM: per_request_input_tokens_limit reads a continued
response's summed input.

A response is continued once (the first request pauses, as Anthropic's pause_turn or
OpenAI's background mode do; pydantic-ai sends a second request and merges the two).
Each request has 60 input tokens, under a per-request limit of 100. The docs: "this limit
is checked against each request's input token count independently". Exit 1 when the run
is stopped by the per-request limit anyway.
"""

import sys

from pydantic_ai import Agent
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.usage import RequestUsage, UsageLimits

inputs = []


def model(messages, info):
    usage = RequestUsage(input_tokens=60, output_tokens=5)
    inputs.append(usage.input_tokens)
    if len(inputs) == 1:  # the first request pauses; pydantic-ai continues it
        return ModelResponse(
            parts=[TextPart("half ")], usage=usage, state="suspended", provider_response_id="a"
        )
    return ModelResponse(parts=[TextPart("done")], usage=usage, provider_response_id="b")


try:
    result = Agent(FunctionModel(model)).run_sync(
        "go", usage_limits=UsageLimits(per_request_input_tokens_limit=100)
    )
    print(f"requests' input tokens {inputs}: the run completes ({result.output!r})")
    sys.exit(0)
except UsageLimitExceeded as exc:
    print(f"requests' input tokens {inputs}, none over 100: {exc}")
    sys.exit(1)
