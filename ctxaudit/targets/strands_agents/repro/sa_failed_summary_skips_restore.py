"""SA-FAILED-SUMMARY-SKIPS-RESTORE: when SummarizingConversationManager's summary fails,
the agent keeps every message, but an agent restored from its FileSessionManager session
loses the oldest ones.

Six messages are added as the agent's hooks add them (each stored as it is added); the
conversation is reduced as proactive compression reduces it (reduce_context without an
error, whose failure is swallowed) while the summarizer is down (a subclass raises, so no
model is called), and the agent synced. The agent still holds m0 to m5; the restored one
holds m3 m4 m5. Exit 1 when the two differ.
"""

import contextlib
import os
import sys
import tempfile

os.environ.setdefault("AWS_REGION", "us-east-1")  # the default model is built, never called
from strands import Agent
from strands.agent.conversation_manager import SummarizingConversationManager
from strands.session.file_session_manager import FileSessionManager


class SummarizerDown(SummarizingConversationManager):
    def _generate_summary(self, messages, agent):
        raise RuntimeError("the summarizer is down")


folder = tempfile.mkdtemp()


def agent(sessions):
    return Agent(
        session_manager=sessions,
        callback_handler=None,
        conversation_manager=SummarizerDown(summary_ratio=0.5, preserve_recent_messages=2),
    )


sessions = FileSessionManager(session_id="s", storage_dir=folder)
a = agent(sessions)
for i in range(6):
    m = {"role": ("user", "assistant")[i % 2], "content": [{"text": f"m{i}"}]}
    a.messages.append(m)
    sessions.append_message(m, a)
# proactive compression's call: its failure is swallowed (releases before it re-raise,
# having raised the count all the same)
with contextlib.suppress(RuntimeError):
    a.conversation_manager.reduce_context(a)
sessions.sync_agent(a)
restored = agent(FileSessionManager(session_id="s", storage_dir=folder))
had = [m["content"][0]["text"] for m in a.messages]
got = [m["content"][0]["text"] for m in restored.messages]
print(f"the agent held {had}; restored from its session: {got}")
sys.exit(1 if got != had else 0)
