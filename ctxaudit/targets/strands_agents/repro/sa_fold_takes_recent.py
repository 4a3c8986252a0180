"""SA-FOLD-TAKES-RECENT: SummarizingConversationManager summarizes messages among the
newest preserve_recent_messages, which it promises always to keep.

An agent has answered one question with a tool's help (q0, its call t1, the result, the
answer a2) and is asked another (q3); the model's call overflows. The manager, with
preserve_recent_messages=3 and summary_ratio=0.5, must keep the newest three (the result,
a2, q3): its share (two messages) reaches them, so it cuts at the oldest of them; that is
a tool result, and it moves the cut forward over it instead of back, so the result is
summarized and two messages are kept. The summarizer is a subclass that records what it
is sent (no model is called). Exit 1 when the summary was sent one of the newest
messages.
"""

import os
import sys

os.environ.setdefault("AWS_REGION", "us-east-1")  # the default model is built, never called
from strands import Agent
from strands.agent.conversation_manager import SummarizingConversationManager


class Recording(SummarizingConversationManager):
    def _generate_summary(self, messages, agent):
        self.sent = [label(m) for m in messages]
        return {"role": "user", "content": [{"text": "summary"}]}


def label(message):
    block = message["content"][0]
    if "toolUse" in block:
        return "call " + block["toolUse"]["toolUseId"]
    if "toolResult" in block:
        return "result " + block["toolResult"]["toolUseId"]
    return block["text"]


def text(role, t):
    return {"role": role, "content": [{"text": t}]}


def call(i):
    return {
        "role": "assistant",
        "content": [{"toolUse": {"toolUseId": i, "name": "lookup", "input": {}}}],
    }


def result(i):
    return {
        "role": "user",
        "content": [{"toolResult": {"toolUseId": i, "status": "success", "content": []}}],
    }


def fold(messages, preserve, ratio):
    manager = Recording(summary_ratio=ratio, preserve_recent_messages=preserve)
    agent = Agent(callback_handler=None, conversation_manager=manager, messages=messages)
    newest = [label(m) for m in agent.messages[-preserve:]]
    manager.reduce_context(agent)
    taken = [m for m in newest if m in manager.sent]
    print(
        f"preserve_recent_messages={preserve}, the newest {newest}: the summary was sent "
        f"{manager.sent}, {taken} among them"
    )
    return bool(taken)


broken = fold(
    [text("user", "q0"), call("t1"), result("t1"), text("assistant", "a2"), text("user", "q3")],
    preserve=3,
    ratio=0.5,
)
sys.exit(1 if broken else 0)
