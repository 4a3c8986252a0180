"""SA-WINDOW-PIN-RESTORE (upstream issue #4087): with
SlidingWindowConversationManager(window_size=4, pin_first=2), an agent restored from its
FileSessionManager session after a trim holds another conversation than the agent had.

Nine messages are added as the agent's hooks add them (each stored as it is added), the
window is applied (as after every agent call) and the agent synced; a new agent over the
same session is restored. The agent held m0 m1 (pinned) m6 m7 m8; the restored one holds
m4 m5 (trimmed) m6 m7 m8. Exit 1 when the two differ.
"""

import inspect
import os
import sys
import tempfile

os.environ.setdefault("AWS_REGION", "us-east-1")  # the default model is built, never called
from strands import Agent
from strands.agent.conversation_manager import SlidingWindowConversationManager
from strands.session.file_session_manager import FileSessionManager

if "pin_first" not in inspect.signature(SlidingWindowConversationManager).parameters:
    print("this release has no pin_first (it came with 1.43.0): not applicable")
    sys.exit(0)

folder = tempfile.mkdtemp()


def agent(sessions):
    return Agent(
        session_manager=sessions,
        callback_handler=None,
        conversation_manager=SlidingWindowConversationManager(window_size=4, pin_first=2),
    )


sessions = FileSessionManager(session_id="s", storage_dir=folder)
a = agent(sessions)
for i in range(9):
    m = {"role": ("user", "assistant")[i % 2], "content": [{"text": f"m{i}"}]}
    a.messages.append(m)
    sessions.append_message(m, a)
a.conversation_manager.apply_management(a)
sessions.sync_agent(a)
restored = agent(FileSessionManager(session_id="s", storage_dir=folder))
had = [m["content"][0]["text"] for m in a.messages]
got = [m["content"][0]["text"] for m in restored.messages]
print(f"the agent held {had}; restored from its session: {got}")
sys.exit(1 if got != had else 0)
