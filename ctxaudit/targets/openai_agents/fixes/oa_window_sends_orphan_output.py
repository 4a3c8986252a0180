"""OA-WINDOW-SENDS-ORPHAN-OUTPUT (C1): the compaction session exposes its store's
retrieval settings (``session_settings``), so the runner, which reads the history limit
from the session it is given, knows the history it reads is limited and prunes the
tool outputs the limit cut from their calls (openai-agents-python #4324's pruning, which
0.20.0 added for a store given directly and for ``RunConfig``). Nothing else changes: the
compaction session's ``get_items`` already read through its store's default.

One form: the class and its ``__init__`` read the same from 0.20.0 (the first release
with the pruning) through 0.24.0."""

from ctxaudit.fixes import Edit, Fix, Form

SESSION = "agents/memory/openai_responses_compaction_session.py"
INIT = "    def __init__(\n"
PROPERTY = (
    "    @property\n"
    "    def session_settings(self):  # type: ignore[override]\n"
    '        """The store\'s retrieval settings, which the runner reads the limit from."""\n'
    '        return getattr(self.underlying_session, "session_settings", None)\n'
    "\n"
)

FIX = Fix(
    finding="OA-WINDOW-SENDS-ORPHAN-OUTPUT",
    why="the compaction session exposes its store's retrieval settings to the runner",
    forms=(
        Form(
            versions=">=0.20.0",
            edits=(Edit(SESSION, INIT, PROPERTY + INIT),),
            anchors=(
                (SESSION, "        self.underlying_session = underlying_session\n"),
                # the runner's pruning of what a limit orphans (0.20.0 on)
                ("agents/run_internal/session_persistence.py", "output_pruning_indexes"),
            ),
        ),
    ),
)
