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

Runs only in a pydantic-ai environment (``tests/pydantic_ai/inenv``).
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any

from pydantic_ai import Agent, RunContext, Tool
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage, RunUsage, UsageLimits

from model.budget import Cap
from model.config import Caps

#: the limit a ``UsageLimitExceeded`` message names -> the model's cap
LIMIT_CAPS = {
    "request_limit": Cap.ITERATIONS,
    "input_tokens_limit": Cap.INPUT,
    "output_tokens_limit": Cap.OUTPUT,
    "total_tokens_limit": Cap.TOTAL,
    "per_request_input_tokens_limit": Cap.REQUEST_INPUT,
    "tool_calls_limit": Cap.TOOL_CALLS,
}
_LIMIT_RE = re.compile(r"the (\w+) of -?\d+")


@dataclass(frozen=True)
class Segment:
    """One request of a response: a response continued (a ``suspended`` segment, the
    ``pause_turn`` shape) is several requests whose usage pydantic-ai sums."""

    input: int  # the request's input tokens, cached ones included
    cached: int  # of which read from the cache
    output: int


@dataclass(frozen=True)
class Step:
    segments: tuple[Segment, ...]
    tools: int  # tool calls in the response; 0: the final text answer


@dataclass(frozen=True)
class Limits:
    """``UsageLimits``; None disables a limit."""

    requests: int | None = None
    input: int | None = None
    output: int | None = None
    total: int | None = None
    request_input: int | None = None
    tool_calls: int | None = None

    def usage_limits(self) -> UsageLimits:
        return UsageLimits(
            request_limit=self.requests,
            input_tokens_limit=self.input,
            output_tokens_limit=self.output,
            total_tokens_limit=self.total,
            per_request_input_tokens_limit=self.request_input,
            tool_calls_limit=self.tool_calls,
        )

    def caps(self) -> Caps:
        """The model's caps under pydantic-ai's documented contract (docs/properties.md,
        section 1b): tokens reached only past a limit, 0 a real limit, a request refused
        while a token limit is passed, a response counted once whatever its requests."""

        def cap(value: int | None) -> int:
            return -1 if value is None else value

        return Caps(
            max_iterations=float(cap(self.requests)),
            max_input_tokens=cap(self.input),
            max_output_tokens=cap(self.output),
            max_total_tokens=cap(self.total),
            max_request_input_tokens=cap(self.request_input),
            max_tool_calls=cap(self.tool_calls),
            tool_call_weight=0.0,
            at_cap=False,
            zero_is_cap=True,
            refuse_over_cap=True,
        )


@dataclass(frozen=True)
class Meters:
    requests: int
    input: int
    output: int
    tool_calls: int


@dataclass(frozen=True)
class Observed:
    requests_received: int  # FunctionModel calls: every request, continuations included
    seen_by_tools: tuple[tuple[int, int, int], ...]  # (requests, input, output) per tool call
    raised: Cap | None  # the limit the run stopped on
    message: str | None
    pool: Meters


def meters(usage: RunUsage) -> Meters:
    return Meters(usage.requests, usage.input_tokens, usage.output_tokens, usage.tool_calls)


def pool_of(m: Meters) -> RunUsage:
    return RunUsage(
        requests=m.requests,
        input_tokens=m.input,
        output_tokens=m.output,
        tool_calls=m.tool_calls,
    )


def limit_named(message: str) -> Cap:
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

    raised: Cap | None = None
    message: str | None = None
    try:
        start(agent, entry, pool, limits.usage_limits())
    except UsageLimitExceeded as exc:
        message = str(exc).split(". Consider")[0]
        raised = limit_named(message)
    return Observed(len(requests), tuple(seen), raised, message, meters(pool))
