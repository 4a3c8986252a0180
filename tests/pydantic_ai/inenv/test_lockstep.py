"""B1, B2 and B3 on pydantic-ai's ``UsageLimits``: the release's agent loop and the
model (``model/budget.py``), driven in lockstep by the budget concern's shared run
lockstep (``ctxaudit/locksteps/budget_runs.py``) through pydantic-ai's adapter
(``ctxaudit/targets/pydantic_ai/adapter.py``: its entry points ``run_sync``, ``run`` and
``iter``, its documented contract as the model's parameters). A run that enters a
registered finding's region is left out (``ctxaudit/targets/pydantic_ai/findings.py``).
"""

from __future__ import annotations

import pytest

from ctxaudit.locksteps.budget_runs import run_lockstep
from ctxaudit.targets.pydantic_ai import findings
from ctxaudit.targets.pydantic_ai.adapter import Budget
from model.budget import Budget as Model
from tests.pydantic_ai.inenv.conftest import VERSION

pytestmark = pytest.mark.properties("B1", "B2", "B3")


def left_out(before: Model, inputs: tuple[int, ...], outputs: tuple[int, ...]) -> str | None:
    return findings.left_out(VERSION, findings.Call(before, inputs, outputs))


def test_usage_lockstep() -> None:
    run_lockstep(Budget(VERSION), left_out)
