"""C1, S6 and S7 on a target's summarization, through its adapter (the target's
``concerns`` name it): the fold concern's shared lockstep and its seed-free programs
(``ctxaudit/concerns/fold.py``)."""

from __future__ import annotations

import pytest

from ctxaudit.locksteps.fold import run_lockstep
from ctxaudit.locksteps.fold_programs import PROGRAMS, NotApplicable, run_program
from ctxaudit.targets.concern_suites import adapter

pytestmark = pytest.mark.properties("C1", "S6", "S7")


def test_fold_lockstep(request: pytest.FixtureRequest) -> None:
    run_lockstep(adapter(request.config, "fold"))


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_fold_program(request: pytest.FixtureRequest, name: str) -> None:
    try:
        run_program(name, adapter(request.config, "fold"))
    except NotApplicable as why:
        pytest.skip(str(why))
