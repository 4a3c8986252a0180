"""SA-FAILED-SUMMARY-SKIPS-RESTORE (S2): the summary is written before the folded messages
are counted as removed, so a summary that fails counts nothing and a restore skips no
message the agent still holds."""

from ctxaudit.fixes import Edit, Fix, Form

SUMMARIZING = "strands/agent/conversation_manager/summarizing_conversation_manager.py"


def _edits(folded: str) -> tuple[Edit, ...]:
    """The two edits, over the name the release gives the folded messages."""
    return (
        Edit(
            SUMMARIZING,
            "        # Keep track of the number of messages that have been summarized thus far.\n",
            "        # Write the summary first: a summary that fails folds nothing, so counts nothing\n"
            f"        summary = self._generate_summary({folded}, agent)\n"
            "\n"
            "        # Keep track of the number of messages that have been summarized thus far.\n",
        ),
        Edit(
            SUMMARIZING,
            f"        self._summary_message = self._generate_summary({folded}, agent)\n",
            "        self._summary_message = summary\n",
        ),
    )


FIX = Fix(
    finding="SA-FAILED-SUMMARY-SKIPS-RESTORE",
    why="a summary that fails leaves removed_message_count as it was, so the restore's "
    "offset skips only messages a summary replaced",
    forms=(
        Form(versions=">=1.43.0", edits=_edits("to_summarize")),
        Form(versions="<1.43.0", edits=_edits("messages_to_summarize")),
    ),
)
