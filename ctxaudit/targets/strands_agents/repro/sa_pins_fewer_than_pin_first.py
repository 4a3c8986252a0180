"""SA-PINS-FEWER-THAN-PIN-FIRST: a conversation manager told to pin the first N messages
pins only those the conversation held at its first try to reduce it; when that came
before the conversation had N messages, the later of the first N are summarized or
trimmed like any other.

A sliding window of three with pin_first=3 is first asked to reduce a conversation of
one message (a long first prompt; it cannot trim a pinned message); the conversation
grows to five (u0 a1 u2 a3 u4) and the window trims: a1 and u2, the second and third
messages, go. A summarizing manager with pin_first=4 and preserve_recent_messages=1
first tries at three messages (everything in its share is pinned: it cannot fold); at
nine it folds the fourth. The summarizer is a subclass that records what it is sent (no
model is called). Exit 1 when either manager lost one of the first N messages.
"""

import inspect
import os
import sys

os.environ.setdefault("AWS_REGION", "us-east-1")  # the default model is built, never called
from strands import Agent
from strands.agent.conversation_manager import (
    SlidingWindowConversationManager,
    SummarizingConversationManager,
)

if "pin_first" not in inspect.signature(SummarizingConversationManager).parameters:
    print("this release has no pin_first (it came with 1.43.0): not applicable")
    sys.exit(0)


class Recording(SummarizingConversationManager):
    def _generate_summary(self, messages, agent):
        self.sent = [m["content"][0]["text"] for m in messages]
        return {"role": "user", "content": [{"text": "summary"}]}


def text(i):
    return {"role": "user" if i % 2 == 0 else "assistant", "content": [{"text": f"m{i}"}]}


def lost(manager, first, grown, pin):
    """The first ``pin`` messages the manager no longer holds after a first try at
    ``first`` messages and a reduction at ``grown``."""
    agent = Agent(callback_handler=None, conversation_manager=manager, messages=[])
    agent.messages.extend(text(i) for i in range(first))
    manager.reduce_context(agent)  # its first try: nothing it may reduce
    agent.messages.extend(text(i) for i in range(first, grown))
    manager.reduce_context(agent)
    held = [m["content"][0]["text"] for m in agent.messages]
    gone = [f"m{i}" for i in range(pin) if f"m{i}" not in held]
    print(
        f"{type(manager).__name__}(pin_first={pin}): first try at {first} messages, "
        f"then at {grown}; holds {held}; of the first {pin}, lost {gone}"
    )
    return gone


window = lost(SlidingWindowConversationManager(window_size=3, pin_first=3), 1, 5, 3)
summary = lost(Recording(summary_ratio=0.5, preserve_recent_messages=1, pin_first=4), 3, 9, 4)
sys.exit(1 if window or summary else 0)
