"""S2, S6 and C1 on strands-agents' Agent: its conversation folded by a
SummarizingConversationManager or trimmed by a SlidingWindowConversationManager (pinning
the first messages or not), persisted by a FileSessionManager (and a SnapshotSessionManager
from 1.55 on), restored by a new agent over the same folder between turns; driven by the
restore concern's shared lockstep (``ctxaudit/locksteps/restore.py``) through the target's
adapter (``ctxaudit/targets/strands_agents/conversation.py``). A restore that enters a
registered finding's region is not made (``ctxaudit/targets/strands_agents/findings.py``).
The concern's seed-free programs run beside the search, each with each store.
"""

from __future__ import annotations

import logging

import pytest

from ctxaudit.concerns.restore import RestoreStep
from ctxaudit.locksteps.restore import make_machine
from ctxaudit.locksteps.restore_programs import NotApplicable, programs, run_program
from ctxaudit.targets.strands_agents import findings
from ctxaudit.targets.strands_agents.conversation import Restore
from tests.strands_agents.inenv.conftest import VERSION

pytestmark = pytest.mark.properties("S2", "S6", "C1")
# strands logs every fold it cannot make and every trim it cannot find (the lockstep draws
# them on purpose); a failure's output is the counterexample, not those lines
logging.getLogger("strands").setLevel(logging.CRITICAL)


def left_out(step: RestoreStep) -> str | None:
    return findings.left_out(VERSION, step)


TestRestore = make_machine(Restore(VERSION), left_out).TestCase


@pytest.mark.parametrize(("program", "store"), programs(Restore(VERSION)))
def test_program(program: str, store: str) -> None:
    """Each of the concern's seed-free programs, with each store of the release."""
    try:
        run_program(program, store, Restore(VERSION), left_out)
    except NotApplicable as e:
        pytest.skip(str(e))
