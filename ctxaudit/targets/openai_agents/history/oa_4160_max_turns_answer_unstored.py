"""openai-agents #4160 (fixed in 0.19.3): when a run reaches max_turns and its
``max_turns`` error handler answers instead (a documented way to end a run), the answer
the caller gets must be stored in the session like any other turn's. Before the fix the
non-streamed run handed the session an empty list (an offset left over from the last
turn): the caller got the answer, the session never saw it. Exit 1 when the session
lacks it."""

import asyncio
import sys

from agents import Agent, Runner, SQLiteSession, function_tool
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall


@function_tool
def lookup() -> str:
    return "found"


class CallsTheTool(Model):
    """Every turn asks for the tool: the run can only end at its turn limit."""

    async def get_response(self, *args, **kwargs):
        call = ResponseFunctionToolCall(
            type="function_call", call_id="c1", name="lookup", arguments="{}", id="f1"
        )
        return ModelResponse(output=[call], usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError


async def main():
    session = SQLiteSession("s", ":memory:")
    agent = Agent(name="a", model=CallsTheTool(), tools=[lookup])
    result = await Runner.run(
        agent,
        "question",
        max_turns=1,
        session=session,
        error_handlers={"max_turns": lambda data: "the fallback answer"},
    )
    print("the caller got:", result.final_output)
    stored = [str(i.get("content")) for i in await session.get_items()]
    session.close()
    print("the session holds:", [i[:40] for i in stored])
    if not any("the fallback answer" in s for s in stored):
        print("BROKEN: the answer the caller got was never stored")
        sys.exit(1)


asyncio.run(main())
