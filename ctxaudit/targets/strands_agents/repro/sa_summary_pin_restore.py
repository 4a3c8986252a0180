"""SA-SUMMARY-PIN-RESTORE (upstream issue #4027): with
SummarizingConversationManager(pin_first=1), an agent restored from its FileSessionManager
session after a fold holds another conversation than the agent had.

Six messages are added as the agent's hooks add them (each stored as it is added), the
conversation is folded (the summary written by a subclass, so no model is called) and the
agent synced; a new agent over the same session is restored. The agent held m0 (pinned),
the summary, m3 m4 m5; the restored one holds the summary, m2 (folded) and m3 m4 m5.
Exit 1 when the two differ.
"""

import inspect
import os
import sys
import tempfile

os.environ.setdefault("AWS_REGION", "us-east-1")  # the default model is built, never called
from strands import Agent
from strands.agent.conversation_manager import SummarizingConversationManager
from strands.session.file_session_manager import FileSessionManager

if "pin_first" not in inspect.signature(SummarizingConversationManager).parameters:
    print("this release has no pin_first (it came with 1.43.0): not applicable")
    sys.exit(0)


class Summarizing(SummarizingConversationManager):
    def _generate_summary(self, messages, agent):
        return {"role": "user", "content": [{"text": "SUMMARY"}]}


folder = tempfile.mkdtemp()


def agent(sessions):
    return Agent(
        session_manager=sessions,
        callback_handler=None,
        conversation_manager=Summarizing(
            summary_ratio=0.5, preserve_recent_messages=2, pin_first=1
        ),
    )


sessions = FileSessionManager(session_id="s", storage_dir=folder)
a = agent(sessions)
for i in range(6):
    m = {"role": ("user", "assistant")[i % 2], "content": [{"text": f"m{i}"}]}
    a.messages.append(m)
    sessions.append_message(m, a)
a.conversation_manager.reduce_context(a)
sessions.sync_agent(a)
restored = agent(FileSessionManager(session_id="s", storage_dir=folder))
had = [m["content"][0]["text"] for m in a.messages]
got = [m["content"][0]["text"] for m in restored.messages]
print(f"the agent held {had}; restored from its session: {got}")
sys.exit(1 if got != had else 0)
