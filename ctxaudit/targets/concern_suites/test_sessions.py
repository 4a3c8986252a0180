"""S2, S3 and S6 on a target's session service, through its adapter (the target's
``concerns`` name it): the session store concern's shared lockstep
(``ctxaudit/concerns/sessions.py``)."""

from __future__ import annotations

import pytest

from ctxaudit.locksteps.sessions import run_lockstep
from ctxaudit.targets.concern_suites import adapter

pytestmark = pytest.mark.properties("S2", "S3", "S6")


def test_sessions_lockstep(request: pytest.FixtureRequest) -> None:
    run_lockstep(adapter(request.config, "sessions"))
