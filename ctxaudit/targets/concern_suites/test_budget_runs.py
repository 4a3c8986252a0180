"""B1-B3 on a target's agent loop under usage limits, a run at a time, through its
adapter (the target's ``concerns`` name it): the budget concern's shared run lockstep
(``ctxaudit/concerns/budget_runs.py``)."""

from __future__ import annotations

import pytest

from ctxaudit.locksteps.budget_runs import run_lockstep
from ctxaudit.targets.concern_suites import adapter

pytestmark = pytest.mark.properties("B1", "B2", "B3")


def test_budget_runs_lockstep(request: pytest.FixtureRequest) -> None:
    run_lockstep(adapter(request.config, "budget-runs"))
