"""B1-B5 on a target's budget meter, through its adapter (the target's ``concerns``
name it): the budget concern's shared lockstep (``ctxaudit/concerns/budget.py``)."""

from __future__ import annotations

import pytest

from ctxaudit.locksteps.budget import run_lockstep
from ctxaudit.targets.concern_suites import adapter

pytestmark = pytest.mark.properties("B1", "B2", "B3", "B4", "B5")


def test_budget_lockstep(request: pytest.FixtureRequest) -> None:
    run_lockstep(adapter(request.config, "budget"))
