"""openai-agents #3857 (fixed in 0.18.3): a streamed run whose model call is retried (a
network error, with a retry policy) must keep the turn's input in the session: the
session is written once, before the first attempt, and the retry must not undo that.
Before the fix the retry rewound the session input it had already saved: the user's
message was lost from the history. Exit 1 when the session lacks it."""

import asyncio
import sys

from agents import Agent, ModelSettings, Runner, SQLiteSession
from agents.models.interface import Model
from agents.retry import ModelRetrySettings, retry_policies
from openai import APIConnectionError
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseOutputMessage,
    ResponseOutputText,
)


class FailsOnceThenAnswers(Model):
    def __init__(self):
        self.calls = 0

    async def get_response(self, *args, **kwargs):
        raise NotImplementedError

    async def stream_response(self, *args, **kwargs):
        self.calls += 1
        if self.calls == 1:
            raise APIConnectionError(request=None)  # the request is not read
        text = ResponseOutputText(type="output_text", text="done", annotations=[])
        message = ResponseOutputMessage(
            id="m", type="message", role="assistant", status="completed", content=[text]
        )
        response = Response.model_construct(
            id="resp_1",
            object="response",
            created_at=0,
            model="fake",
            output=[message],
            parallel_tool_calls=False,
            tool_choice="auto",
            tools=[],
            usage=None,
        )
        yield ResponseCompletedEvent(
            type="response.completed", response=response, sequence_number=0
        )


async def main():
    session = SQLiteSession("s", ":memory:")
    await session.add_items([{"role": "user", "content": "previous"}])
    model = FailsOnceThenAnswers()
    retry = ModelRetrySettings(max_retries=1, policy=retry_policies.network_error())
    agent = Agent(name="a", model=model, model_settings=ModelSettings(retry=retry))
    result = Runner.run_streamed(agent, input="the question", session=session)
    async for _ in result.stream_events():
        pass
    if model.calls != 2:
        print(
            f"ctxaudit: {model.calls} model call(s), not a retry; the program did not run its case"
        )
        sys.exit(2)
    stored = [str(i.get("content"))[:30] for i in await session.get_items()]
    session.close()
    print("the session holds:", stored)
    if "the question" not in stored:
        print("BROKEN: the retried turn's input is gone from the session")
        sys.exit(1)


asyncio.run(main())
