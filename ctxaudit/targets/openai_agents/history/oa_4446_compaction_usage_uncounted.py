"""openai-agents #4446 (fixed in 0.21.1): the usage a run reports must count every model
call the run made, the compaction call its session makes after the turn included: a
budget metered on ``result.context_wrapper.usage`` otherwise never sees the compaction's
tokens. Before the fix the compact call's usage was dropped. Exit 1 when the run's usage
leaves the compaction out."""

import asyncio
import sys
from types import SimpleNamespace

from agents import Agent, Runner
from agents.items import ModelResponse
from agents.memory import OpenAIResponsesCompactionSession, SessionABC
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseOutputMessage, ResponseOutputText
from openai.types.responses.response_usage import (
    InputTokensDetails,
    OutputTokensDetails,
    ResponseUsage,
)


def usage(tokens_in, tokens_out):
    # model_construct: the details' required fields differ between openai releases
    return ResponseUsage.model_construct(
        input_tokens=tokens_in,
        input_tokens_details=InputTokensDetails.model_construct(cached_tokens=0),
        output_tokens=tokens_out,
        output_tokens_details=OutputTokensDetails.model_construct(reasoning_tokens=0),
        total_tokens=tokens_in + tokens_out,
    )


class Answers(Model):
    async def get_response(self, *args, **kwargs):
        text = ResponseOutputText(type="output_text", text="ok", annotations=[])
        message = ResponseOutputMessage(
            id="m", type="message", role="assistant", status="completed", content=[text]
        )
        spent = Usage(requests=1, input_tokens=10, output_tokens=5, total_tokens=15)
        return ModelResponse(output=[message], usage=spent, response_id="resp_1")

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError


class Store(SessionABC):
    def __init__(self):
        self.session_id = "s"
        self.session_settings = None
        self.rows = []

    async def get_items(self, limit=None):
        return list(self.rows if limit is None else self.rows[-limit:])

    async def add_items(self, items):
        self.rows.extend(items)

    async def pop_item(self):
        return self.rows.pop() if self.rows else None

    async def clear_session(self):
        self.rows.clear()


class Responses:
    async def compact(self, **request):
        return SimpleNamespace(
            output=[{"type": "compaction", "encrypted_content": "enc"}], usage=usage(100, 20)
        )


async def main():
    session = OpenAIResponsesCompactionSession(
        "s",
        Store(),
        client=SimpleNamespace(responses=Responses()),
        should_trigger_compaction=lambda context: True,
    )
    result = await Runner.run(Agent(name="a", model=Answers()), "question", session=session)
    if not any(i.get("type") == "compaction" for i in await session.get_items()):
        print("ctxaudit: no compaction ran, the program did not run its case")
        sys.exit(2)
    spent = result.context_wrapper.usage
    print(f"the run reports {spent.input_tokens} input, {spent.output_tokens} output tokens")
    if (spent.input_tokens, spent.output_tokens) != (110, 25):
        print("BROKEN: the run's usage leaves out the compaction call (expected 110, 25)")
        sys.exit(1)


asyncio.run(main())
