"""pydantic-ai driven through its public API, only the LLM faked.

The LLM is pydantic-ai's own ``FunctionModel``: each request it receives is answered by
the next scripted response, whose ``RequestUsage`` is what a provider would report. A
run is ``agent.run_sync(..., usage=pool, usage_limits=...)``: ``pool`` is a ``RunUsage``
the caller owns, which the run meters into (a delegate run given ``ctx.usage`` does the
same), so meters can be carried from one run into the next. The same run can start at
any documented entry point that runs the agent to its end (:data:`ENTRY_POINTS`):
``run_sync``, the async ``run``, or the async ``iter``, stepped node by node. What is
observed, all of it public: how many requests the model received, the run's meters as
each tool call sees them (``RunContext.usage``), the ``UsageLimitExceeded`` the run
raised (the limit its message names), and the pool after the run.

:class:`Budget` is this, as the budget concern's run adapter
(``ctxaudit/concerns/budget_runs.py``): the shared run lockstep
(``ctxaudit/locksteps/budget_runs.py``) drives it beside the model, with
:data:`CONTRACT`, pydantic-ai's documented contract, as the model's parameters.

Runs only in a pydantic-ai environment (``tests/pydantic_ai/inenv``).
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from pydantic_ai import Agent, RunContext, Tool
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage, RunUsage, UsageLimits

from ctxaudit.concerns import budget_runs as limit
from ctxaudit.concerns.budget_runs import Contract, Limits, Meters, Observed, Step

#: the limit a ``UsageLimitExceeded`` message names -> the protocol's name for it
LIMIT_CAPS = {
    "request_limit": limit.REQUESTS,
    "input_tokens_limit": limit.INPUT,
    "output_tokens_limit": limit.OUTPUT,
    "total_tokens_limit": limit.TOTAL,
    "per_request_input_tokens_limit": limit.REQUEST_INPUT,
    "tool_calls_limit": limit.TOOL_CALLS,
}
_LIMIT_RE = re.compile(r"the (\w+) of -?\d+")


#: pydantic-ai's documented contract (docs/properties.md, section 1b): the model's parameters
CONTRACT = Contract(
    at_cap=False,
    zero_is_cap=True,
    refuse_over_cap=True,
    quoted="pydantic_ai/usage.py, UsageLimits.check_tokens: 'Raises a UsageLimitExceeded "
    "exception if the usage exceeds any of the token limits' (reached only past a limit); "
    "'Each of the limits can be set to `None` to disable that limit' (0 is a limit); "
    "check_before_request: 'Raises a UsageLimitExceeded exception if the next request "
    "would exceed any of the limits' (a meter already past its limit refuses the request)",
)


def usage_limits(limits: Limits) -> UsageLimits:
    return UsageLimits(
        request_limit=limits.requests,
        input_tokens_limit=limits.input,
        output_tokens_limit=limits.output,
        total_tokens_limit=limits.total,
        per_request_input_tokens_limit=limits.request_input,
        tool_calls_limit=limits.tool_calls,
    )


def meters(usage: RunUsage) -> Meters:
    return Meters(usage.requests, usage.input_tokens, usage.output_tokens, usage.tool_calls)


def pool_of(m: Meters) -> RunUsage:
    return RunUsage(
        requests=m.requests,
        input_tokens=m.input,
        output_tokens=m.output,
        tool_calls=m.tool_calls,
    )


def limit_named(message: str) -> str:
    m = _LIMIT_RE.search(message)
    if m is None or m.group(1) not in LIMIT_CAPS:
        raise ValueError(f"a UsageLimitExceeded that names no known limit: {message!r}")
    return LIMIT_CAPS[m.group(1)]


#: where a run starts: ``Agent.run_sync``, ``Agent.run`` (async), ``Agent.iter`` (async,
#: every node stepped through)
ENTRY_POINTS = ("run_sync", "run", "iter")


def start(agent: Agent[None, str], entry: str, pool: RunUsage, limits: UsageLimits) -> None:
    """Run ``agent`` to its end from ``entry`` (:data:`ENTRY_POINTS`)."""
    if entry == "run_sync":
        agent.run_sync("go", usage=pool, usage_limits=limits)
        return

    async def whole() -> None:
        if entry == "run":
            await agent.run("go", usage=pool, usage_limits=limits)
            return
        async with agent.iter("go", usage=pool, usage_limits=limits) as stepped:
            async for _ in stepped:
                pass

    asyncio.run(whole())


def run(
    steps: tuple[Step, ...], limits: Limits, pool: RunUsage, entry: str = "run_sync"
) -> Observed:
    """One agent run of ``steps`` (the last a text answer) metering into ``pool``,
    started at ``entry``."""
    requests: list[int] = []
    segment_of: list[tuple[int, int]] = [
        (i, j) for i, step in enumerate(steps) for j in range(len(step.segments))
    ]
    seen: list[tuple[int, int, int]] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(requests) >= len(segment_of):
            raise AssertionError("the run asked for more responses than were scripted")
        i, j = segment_of[len(requests)]
        requests.append(len(messages))
        step, seg = steps[i], steps[i].segments[j]
        usage = RequestUsage(
            input_tokens=seg.input, cache_read_tokens=seg.cached, output_tokens=seg.output
        )
        if j < len(step.segments) - 1:
            return ModelResponse(
                parts=[TextPart(f"part {i}.{j} ")],
                usage=usage,
                state="suspended",
                provider_response_id=f"r{i}.{j}",
            )
        if step.tools:
            parts: list[Any] = [
                ToolCallPart("probe", {}, tool_call_id=f"c{i}.{k}") for k in range(step.tools)
            ]
        else:
            parts = [TextPart(f"answer {i}")]
        return ModelResponse(parts=parts, usage=usage, provider_response_id=f"r{i}.{j}")

    def probe(ctx: RunContext[None]) -> str:
        u = ctx.usage
        seen.append((u.requests, u.input_tokens, u.output_tokens))
        return "ok"

    agent = Agent(FunctionModel(answer), tools=[Tool(probe, takes_ctx=True)])

    raised: str | None = None
    message: str | None = None
    try:
        start(agent, entry, pool, usage_limits(limits))
    except UsageLimitExceeded as exc:
        message = str(exc).split(". Consider")[0]
        raised = limit_named(message)
    return Observed(len(requests), tuple(seen), raised, message, meters(pool))


class Budget:
    """pydantic-ai's agent loop under ``UsageLimits`` as the budget concern's run adapter
    (:class:`~ctxaudit.concerns.budget_runs.RunBudgetAdapter`): each run meters into a
    fresh ``RunUsage`` that holds the lockstep's pool."""

    entry_points = ENTRY_POINTS
    contract = CONTRACT
    capabilities = frozenset(
        {limit.TOKEN_LIMITS, limit.TOOL_LIMIT, limit.CARRIED_POOL, limit.CONTINUED}
    )

    def __init__(self, version: str) -> None:
        self.name = f"pydantic-ai {version}: UsageLimits"

    def run(self, steps: tuple[Step, ...], limits: Limits, pool: Meters, entry: str) -> Observed:
        return run(steps, limits, pool_of(pool), entry)
