"""PAI-PRECHECK-SKIPS-OUTPUT: a run already past its output_tokens_limit sends one
more request.

The run starts with usage carried in (``usage=``, as a delegate given ``ctx.usage`` or a
conversation's running total does): 11 output tokens, over a limit of 5. The same run
carried in past its input limit is refused before any request. The docs of
check_before_request: "Raises a UsageLimitExceeded exception if the next request would
exceed any of the limits". Exit 1 when the model receives a request anyway.
"""

import sys

from pydantic_ai import Agent
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.usage import RequestUsage, RunUsage, UsageLimits

requests = {"input_tokens": 0, "output_tokens": 0}


def run(meter):
    def model(messages, info):
        requests[meter] += 1
        return ModelResponse(
            parts=[TextPart("a")], usage=RequestUsage(input_tokens=1, output_tokens=1)
        )

    try:
        Agent(FunctionModel(model)).run_sync(
            "go",
            usage=RunUsage(**{meter: 11}),
            usage_limits=UsageLimits(**{f"{meter}_limit": 5}),
        )
        outcome = "completed"
    except UsageLimitExceeded as exc:
        outcome = str(exc).split(". Consider")[0]
    print(f"{meter}=11 carried in, {meter}_limit=5: {requests[meter]} request(s) -> {outcome}")


run("input_tokens")
run("output_tokens")
sys.exit(1 if requests["output_tokens"] else 0)
