"""openai-agents #4324 (fixed in 0.20.0): with a session retrieval limit
(SessionSettings.limit) whose window starts at a tool output, the run must not send the
model that output without its call (the Responses API refuses an output whose call it
was not given). Exit 1 when the model is sent a tool output whose call is not in its
input."""

import sys
import tempfile
from pathlib import Path

from agents import Agent, RunConfig, Runner, SQLiteSession
from agents.items import ModelResponse
from agents.memory import SessionSettings
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseOutputMessage, ResponseOutputText

sent = []


class Recorder(Model):
    """Answers "ok" and keeps the input it was sent."""

    async def get_response(self, system_instructions, input, *args, **kwargs):
        sent.append(list(input) if isinstance(input, list) else [input])
        text = ResponseOutputText(type="output_text", text="ok", annotations=[])
        message = ResponseOutputMessage(
            id="m", type="message", role="assistant", status="completed", content=[text]
        )
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError


with tempfile.TemporaryDirectory() as tmp:
    session = SQLiteSession("s", Path(tmp) / "turns.db")
    import asyncio

    asyncio.run(
        session.add_items(
            [
                {"role": "user", "content": "weather?"},
                {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
                {"role": "assistant", "content": "It is sunny."},
            ]
        )
    )
    agent = Agent(name="a", model=Recorder())
    config = RunConfig(session_settings=SessionSettings(limit=2))  # the output, the answer
    Runner.run_sync(agent, "and tomorrow?", session=session, run_config=config)
    session.close()

calls = {i.get("call_id") for i in sent[0] if i.get("type") == "function_call"}
orphans = [
    i for i in sent[0] if i.get("type") == "function_call_output" and i.get("call_id") not in calls
]
print("the model was sent:", [i.get("type") or i.get("role") for i in sent[0]])
if orphans:
    print("BROKEN: the model was sent a tool output without its call:", orphans)
    sys.exit(1)
