"""OA-COMPACTION-FAILURE-FAILS-RUN (S9): the runner logs a failed automatic compaction and
lets the run return its answer; the history is unchanged (the session rolls back, or
the compact call failed before any write) and the next turn tries again. Cancellation
is not caught. Manual run_compaction() calls still raise."""

from ctxaudit.fixes import Edit, Fix, Form

RUN = "agents/run.py"
PERSISTENCE = "agents/run_internal/session_persistence.py"
LOGGED = '{i}except Exception as error:\n{i}    logger.warning("compaction failed; history kept: %r", error)\n'

OLD_RUNNER = "            await session.run_compaction(compaction_args)\n"
OLD_RUNNER_LOGGED = (
    "            try:\n"
    "                await session.run_compaction(compaction_args)\n" + LOGGED.format(i=" " * 12)
)

CALL_022 = (
    "        await _call_session_method(\n"
    "            session.run_compaction,\n"
    "            compaction_args,\n"
    "            wrapper=compaction_wrapper,\n"
    "        )\n"
)
CALL_022_LOGGED = (
    "        try:\n"
    "            await _call_session_method(\n"
    "                session.run_compaction,\n"
    "                compaction_args,\n"
    "                wrapper=compaction_wrapper,\n"
    "            )\n" + LOGGED.format(i=" " * 8)
)
CALL_023 = (
    "            session.run_compaction,\n"
    "            compaction_args,\n"
    "            wrapper=wrapper,\n"
    "        )\n"
    "    finally:\n"
)
CALL_023_LOGGED = (
    "            session.run_compaction,\n"
    "            compaction_args,\n"
    "            wrapper=wrapper,\n"
    "        )\n" + LOGGED.format(i=" " * 4) + "    finally:\n"
)

FIX = Fix(
    finding="OA-COMPACTION-FAILURE-FAILS-RUN",
    why="a failed automatic compaction is logged and the run returns its answer",
    forms=(
        Form(versions="<0.8.0", edits=(Edit(RUN, OLD_RUNNER, OLD_RUNNER_LOGGED),)),
        Form(versions=">=0.22.0,<0.23.0", edits=(Edit(PERSISTENCE, CALL_022, CALL_022_LOGGED),)),
        Form(versions=">=0.23.0", edits=(Edit(PERSISTENCE, CALL_023, CALL_023_LOGGED),)),
    ),
)
