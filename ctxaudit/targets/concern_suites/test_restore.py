"""S2, S6 and C1 on a target's agent whose conversation a manager reduces and a session
keeps, through its adapter (the target's ``concerns`` name it): the restore concern's
shared lockstep (``ctxaudit/concerns/restore.py``)."""

from __future__ import annotations

import pytest

from ctxaudit.locksteps.restore import run_lockstep
from ctxaudit.targets.concern_suites import adapter

pytestmark = pytest.mark.properties("S2", "S6", "C1")


def test_restore_lockstep(request: pytest.FixtureRequest) -> None:
    run_lockstep(adapter(request.config, "restore"))
