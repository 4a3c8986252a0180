"""B1-B5: gitreins' EvalCap in lockstep with model.budget, through the budget concern's
shared lockstep (``ctxaudit/concerns/budget.py``) and gitreins' adapter
(``ctxaudit/targets/gitreins/budget.py``).

Every call, tool call, check, clock move and reset is applied to both; the meters, the
credit and the reported cap are compared after each step, and every step of the target
is first held to the budget's invariants (BI1-BI5), which do not trust the model.
"""

from __future__ import annotations

import pytest

from ctxaudit.locksteps.budget import run_lockstep
from ctxaudit.targets.gitreins.budget import Budget
from ctxaudit.targets.gitreins.tree import GitreinsModules

pytestmark = [pytest.mark.gitreins, pytest.mark.properties("B1", "B2", "B3", "B4", "B5")]


def test_budget_lockstep(gitreins: GitreinsModules) -> None:
    run_lockstep(Budget(gitreins))
