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

#: the SDK's tests that pin the bug: each asserts that Runner.run raises the error of a
#: failed automatic compaction (its replacement write, its rollback), after the turn was
#: stored and answered (0.24.0's, checked with this fix alone)
PINS_023 = (
    "tests/memory/test_compaction_suffix.py::test_suffix_transaction_rolls_back_failed_insert",
    "tests/memory/test_compaction_suffix.py::"
    "test_failed_encrypted_suffix_transaction_preserves_original_tokens",
    "tests/memory/test_openai_responses_compaction_session.py::"
    "TestOpenAIResponsesCompactionSession::test_automatic_compaction_rollback_budget",
    "tests/memory/test_sqlalchemy_compaction.py::test_encrypted_prefix_cleanup_is_atomic",
    "tests/memory/test_sqlalchemy_compaction.py::"
    "test_failed_replacement_preserves_history_during_other_instance_access",
    # a resumed handoff whose compaction's replacement fails: the run must raise first
    "tests/test_run_impl_resume_paths.py::test_handoff_resume_retries_rolled_back_compaction",
)

FIX = Fix(
    finding="OA-COMPACTION-FAILURE-FAILS-RUN",
    why="a failed automatic compaction is logged and the run returns its answer",
    forms=(
        Form(versions="<0.8.0", edits=(Edit(RUN, OLD_RUNNER, OLD_RUNNER_LOGGED),)),
        Form(versions=">=0.22.0,<0.23.0", edits=(Edit(PERSISTENCE, CALL_022, CALL_022_LOGGED),)),
        Form(
            versions=">=0.23.0",
            edits=(Edit(PERSISTENCE, CALL_023, CALL_023_LOGGED),),
            pins=PINS_023,
        ),
    ),
)
