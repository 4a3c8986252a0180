"""openai-agents' agent loop under ``max_turns`` as the budget concern's run adapter
(:class:`~ctxaudit.concerns.budget_runs.RunBudgetAdapter`): B1 (the run's ``Usage``)
and B3 (the turn limit).

The LLM is a :class:`agents.models.interface.Model` of the SDK's public interface,
given to the agent: each request gets the next scripted response, its output (tool calls
or a final message) and its usage as a provider reports it (``input_tokens`` with its
cached ones inside). What is observed, all of it public: the requests the model
received, ``RunContextWrapper.usage`` at each tool call, whether the run raised
``MaxTurnsExceeded``, and the run's ``Usage`` (``result.context_wrapper.usage``; a run
that raised returns no result, so its usage is the object the tool calls were shown,
which the run meters into to its end: it raises only after tools ran, or before the
first request, when no tool saw it and nothing was metered).

openai-agents has a request limit and no other (:data:`CONTRACT`): no token limit, no
tool-call limit or meter, no usage carried into a run (each starts from zero), no
continued responses. Runs only in an openai-agents environment
(``tests/openai_agents/inenv``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from agents import Agent, RunContextWrapper, Runner, function_tool
from agents.exceptions import MaxTurnsExceeded
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseUsage,
)
from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

from ctxaudit.concerns import budget_runs as limit
from ctxaudit.concerns.budget_runs import Contract, Limits, Meters, Observed, Step

#: openai-agents' documented contract (docs/properties.md, section 1b)
CONTRACT = Contract(
    at_cap=True,  # no token limit: unused
    zero_is_cap=True,
    refuse_over_cap=False,
    quoted="agents/run.py, Runner.run: 'max_turns: The maximum number of turns to run the "
    "agent for. A turn is defined as one AI invocation (including any tool calls that might "
    "occur). Pass None to disable the turn limit.'; 'If the max_turns is exceeded, a "
    "MaxTurnsExceeded exception is raised' (a limit of 0 allows no invocation)",
)

#: where a run starts: ``Runner.run_sync``, ``Runner.run`` (async) and
#: ``Runner.run_streamed`` (async, its events read to the end)
ENTRY_POINTS = ("run_sync", "run", "run_streamed")


class Scripted(Model):  # type: ignore[misc]  # the SDK ships no stubs for mypy here
    """The LLM: the next scripted response to each request."""

    def __init__(self, steps: tuple[Step, ...]) -> None:
        self.steps = list(steps)
        self.received = 0

    def _next(self) -> tuple[list[Any], int, int, int, str]:
        if not self.steps:
            raise AssertionError("the run asked for more responses than were scripted")
        step, n = self.steps.pop(0), self.received
        self.received += 1
        (seg,) = step.segments  # no continued responses
        output: list[Any] = [
            ResponseFunctionToolCall(
                type="function_call",
                id=f"fc{n}.{k}",
                call_id=f"c{n}.{k}",
                name="probe",
                arguments="{}",
                status="completed",
            )  # fmt: skip
            for k in range(step.tools)
        ] or [
            ResponseOutputMessage(
                type="message",
                id=f"m{n}",
                role="assistant",
                status="completed",
                content=[
                    ResponseOutputText(type="output_text", text=f"answer {n}", annotations=[])
                ],
            )  # fmt: skip
        ]
        return output, seg.input, seg.cached, seg.output, f"r{n}"

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        output, inp, cached, out, rid = self._next()
        usage = Usage(
            requests=1, input_tokens=inp, output_tokens=out, total_tokens=inp + out,
            input_tokens_details=_input_details(cached),
            output_tokens_details=OutputTokensDetails(reasoning_tokens=0),
        )  # fmt: skip
        return ModelResponse(output=output, usage=usage, response_id=rid)

    async def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        output, inp, cached, out, rid = self._next()
        usage = ResponseUsage.model_construct(
            input_tokens=inp, output_tokens=out, total_tokens=inp + out,
            input_tokens_details=_input_details(cached),
            output_tokens_details=OutputTokensDetails(reasoning_tokens=0),
        )  # fmt: skip
        response = Response.model_construct(
            id=rid, object="response", created_at=0, model="scripted", output=output,
            usage=usage, status="completed", parallel_tool_calls=True, tool_choice="auto",
            tools=[],
        )  # fmt: skip
        yield ResponseCompletedEvent(
            type="response.completed", response=response, sequence_number=0
        )


def _input_details(cached: int) -> InputTokensDetails:
    # built without validation: the field set differs across the openai releases the
    # SDK's releases pin (cache_write_tokens is required by later ones)
    return InputTokensDetails.model_construct(cached_tokens=cached, cache_write_tokens=0)


def no_turn_limit() -> int | None:
    """``max_turns`` with no limit: ``None`` where the release documents it ("Pass None
    to disable the turn limit": the audited releases from 0.18 on), else a count no
    script reaches (0.7.0 documents and takes an int only)."""
    return None if "None" in (Runner.run.__doc__ or "").split("max_turns:", 1)[-1][:300] else 2**31


def run(steps: tuple[Step, ...], limits: Limits, entry: str) -> Observed:
    """One agent run of ``steps`` with ``max_turns`` = the request limit, from ``entry``."""
    model = Scripted(steps)
    seen: list[tuple[int, int, int]] = []
    last: list[Usage] = []  # the run's own Usage, as a tool call is shown it

    def probe(ctx: RunContextWrapper[Any]) -> str:
        u = ctx.usage
        seen.append((u.requests, u.input_tokens, u.output_tokens))
        last[:] = [u]
        return "ok"

    agent = Agent(name="agent", model=model, tools=[function_tool(probe)])
    turns = limits.requests if limits.requests is not None else no_turn_limit()
    raised = message = None
    usage: Usage | None = None
    try:
        if entry == "run_sync":
            usage = Runner.run_sync(agent, "go", max_turns=turns).context_wrapper.usage
        elif entry == "run":
            result = asyncio.run(Runner.run(agent, "go", max_turns=turns))
            usage = result.context_wrapper.usage
        else:

            async def streamed() -> Usage:
                result = Runner.run_streamed(agent, "go", max_turns=turns)
                async for _ in result.stream_events():
                    pass
                return result.context_wrapper.usage

            usage = asyncio.run(streamed())
    except MaxTurnsExceeded as exc:
        raised, message = limit.REQUESTS, str(exc)
        usage = last[0] if last else None
    pool = (
        Meters(0, 0, 0)
        if usage is None
        else Meters(usage.requests, usage.input_tokens, usage.output_tokens)
    )
    return Observed(model.received, tuple(seen), raised, message, pool)


class Budget:
    """openai-agents' agent loop as the budget concern's run adapter."""

    entry_points = ENTRY_POINTS
    contract = CONTRACT
    capabilities = frozenset[str]()  # a request limit only

    def __init__(self, version: str) -> None:
        self.name = f"openai-agents {version}: max_turns and Usage"

    def run(self, steps: tuple[Step, ...], limits: Limits, pool: Meters, entry: str) -> Observed:
        return run(steps, limits, entry)
