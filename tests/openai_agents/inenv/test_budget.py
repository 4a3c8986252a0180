"""B1 and B3 on openai-agents' agent loop: ``max_turns`` and the run's ``Usage``, driven
beside the model (``model/budget.py``) by the budget concern's shared run lockstep
(``ctxaudit/locksteps/budget_runs.py``) through openai-agents' run adapter
(``ctxaudit/targets/openai_agents/budget.py``: ``Runner.run_sync``, ``Runner.run`` and
``Runner.run_streamed``; its documented contract as the model's parameters)."""

from __future__ import annotations

import pytest

from ctxaudit.locksteps.budget_runs import run_lockstep
from ctxaudit.targets.openai_agents.budget import Budget
from tests.openai_agents.inenv.conftest import VERSION

pytestmark = pytest.mark.properties("B1", "B3")


def test_turns_and_usage_lockstep() -> None:
    run_lockstep(Budget(VERSION))
