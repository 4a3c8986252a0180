"""OA-WINDOW-SENDS-ORPHAN-OUTPUT: a store whose retrieval default (SessionSettings.limit)
shows a window that starts at a tool output, wrapped in the compaction session as the
sessions docs wrap it: the run sends the model that output without its call (the
Responses API refuses such an input). The runner prunes what a limit orphans (#4324,
0.20.0) only when the session it is given has the limit: the compaction session does not
expose its store's settings. Exit 1 when the model is sent the orphan."""

import asyncio
import sys
from types import SimpleNamespace

import agents.memory
from agents import Agent, Runner, SQLiteSession
from agents.items import ModelResponse

if not hasattr(agents.memory, "SessionSettings"):
    print("this release has no SessionSettings (no retrieval window): not applicable")
    sys.exit(0)

from agents.memory import OpenAIResponsesCompactionSession, SessionSettings
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


store = SQLiteSession("s", session_settings=SessionSettings(limit=2))  # the output, the answer
asyncio.run(
    store.add_items(
        [
            {"role": "user", "content": "weather?"},
            {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
            {"role": "assistant", "content": "It is sunny."},
        ]
    )
)
session = OpenAIResponsesCompactionSession(
    "s", store, client=SimpleNamespace(), should_trigger_compaction=lambda context: False
)
Runner.run_sync(Agent(name="a", model=Recorder()), "and tomorrow?", session=session)
store.close()
calls = {i.get("call_id") for i in sent[0] if i.get("type") == "function_call"}
orphans = [
    i for i in sent[0] if i.get("type") == "function_call_output" and i.get("call_id") not in calls
]
print("the model was sent:", [i.get("type") or i.get("role") for i in sent[0]])
if orphans:
    print("BROKEN: the model was sent a tool output without its call:", orphans)
    sys.exit(1)
