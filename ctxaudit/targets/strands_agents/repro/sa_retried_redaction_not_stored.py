"""SA-RETRIED-REDACTION-NOT-STORED: a prompt passed again after a failed call (the same
message object, stored twice) and then redacted by a guardrail is restored with its first
copy as it was before the redaction.

The prompt is added twice as the agent's hooks add it (stored as it is added), then
redacted as the agent redacts it when the model's guardrail asks (the message's content
rewritten in place, then the session told). The agent holds the redacted prompt twice;
the restored one holds the blocked text first. Exit 1 when the two differ.
"""

import os
import sys
import tempfile

os.environ.setdefault("AWS_REGION", "us-east-1")  # the default model is built, never called
from strands import Agent
from strands.session.file_session_manager import FileSessionManager

folder = tempfile.mkdtemp()
sessions = FileSessionManager(session_id="s", storage_dir=folder)
a = Agent(session_manager=sessions, callback_handler=None)
prompt = {"role": "user", "content": [{"text": "a question the guardrail blocks"}]}
for _ in range(2):  # the call failed (a provider error), and the user's code calls again
    a.messages.append(prompt)
    sessions.append_message(prompt, a)
prompt["content"] = [{"text": "[User input redacted.]"}]  # the guardrail's redaction
sessions.redact_latest_message(prompt, a)
restored = Agent(
    session_manager=FileSessionManager(session_id="s", storage_dir=folder), callback_handler=None
)
had = [m["content"][0]["text"] for m in a.messages]
got = [m["content"][0]["text"] for m in restored.messages]
print(f"the agent held {had}; restored from its session: {got}")
sys.exit(1 if got != had else 0)
