"""SA-RETRIED-REDACTION-NOT-STORED (S2): the session manager keeps the records it wrote of
each agent's messages, and a redaction rewrites every record of the redacted message
object, not only the latest (what 1.62.0 does, without its pruning of the records)."""

from ctxaudit.fixes import Edit, Fix, Form

SESSIONS = "strands/session/repository_session_manager.py"

#: the end of append_message (append_bidi_message ends the same way: its docstring differs)
_APPENDED = (
    "            agent: Agent to append the message to\n"
    "            **kwargs: Additional keyword arguments for future extensibility.\n"
    '        """\n'
    "        # Calculate the next index (0 if this is the first message, otherwise increment the "
    "previous index)\n"
    "        latest_agent_message = self._latest_agent_message[agent.agent_id]\n"
    "        if latest_agent_message:\n"
    "            next_index = latest_agent_message.message_id + 1\n"
    "        else:\n"
    "            next_index = 0\n"
    "\n"
    "        session_message = SessionMessage.from_message(message, next_index)\n"
    "        self._latest_agent_message[agent.agent_id] = session_message\n"
    "        self.session_repository.create_message(self.session_id, agent.agent_id, "
    "session_message)\n"
)
_KEEP = "        self._records.setdefault(agent.agent_id, []).append(session_message)\n"

FIX = Fix(
    finding="SA-RETRIED-REDACTION-NOT-STORED",
    why="an earlier record of the message object a guardrail redacted (a retried prompt) is "
    "rewritten with the latest, so a restore reads it redacted too",
    forms=(
        Form(
            versions="<1.62.0",
            edits=(
                Edit(
                    SESSIONS,
                    "        self._latest_agent_message: dict[str, SessionMessage | None] = {}\n",
                    "        self._latest_agent_message: dict[str, SessionMessage | None] = {}\n"
                    "        # Every record written of each agent's messages: a retried prompt is\n"
                    "        # one object stored twice, and a redaction rewrites both.\n"
                    "        self._records: dict[str, list[SessionMessage]] = {}\n",
                ),
                Edit(SESSIONS, _APPENDED, _APPENDED + _KEEP),
                Edit(
                    SESSIONS,
                    "        latest_agent_message.redact_message = redact_message\n"
                    "        return self.session_repository.update_message(self.session_id, "
                    "agent.agent_id, latest_agent_message)\n",
                    "        latest_agent_message.redact_message = redact_message\n"
                    "        for record in self._records.get(agent.agent_id, []):\n"
                    "            if record is not latest_agent_message and record.message is "
                    "redact_message:\n"
                    "                self.session_repository.update_message(self.session_id, "
                    "agent.agent_id, record)\n"
                    "        return self.session_repository.update_message(self.session_id, "
                    "agent.agent_id, latest_agent_message)\n",
                ),
            ),
        ),
    ),
)
