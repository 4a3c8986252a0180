"""S2, S3 and S6 on google-adk's session services: each service of the release and the
model (``model/sessions.py``), driven in lockstep by the session store concern's shared
lockstep (``ctxaudit/locksteps/sessions.py``) through google-adk's adapter
(``ctxaudit/targets/google_adk/sessions.py``): ``InMemorySessionService``, and the two
that persist, ``SqliteSessionService`` and ``DatabaseSessionService`` on a SQLite file,
each reopened by a new service object over the same file. A read that enters a registered
finding's region is left out (``ctxaudit/targets/google_adk/findings.py``).
"""

from __future__ import annotations

import pytest
from hypothesis import settings

from ctxaudit import profiles
from ctxaudit.concerns.sessions import ReadStep
from ctxaudit.locksteps.sessions import make_machine
from ctxaudit.targets.google_adk import findings
from ctxaudit.targets.google_adk.sessions import KINDS, Sessions
from tests.google_adk.inenv.conftest import VERSION

pytestmark = pytest.mark.properties("S2", "S3", "S6")


def lockstep(kind: str) -> type:
    def left_out(step: ReadStep) -> str | None:
        return findings.left_out(VERSION, findings.Step(kind, step))

    return make_machine(Sessions(kind, VERSION), left_out)


TestInMemory = lockstep("in-memory").TestCase
TestSqlite = lockstep("sqlite").TestCase
TestDatabase = lockstep("database").TestCase
# The two that persist: each step writes a SQLite file and reads it back in every form
# (some ten reads through SQLAlchemy for the database service): their search is sized
# for a service-backed suite, per profile (ctxaudit/profiles.py, SERVICE_SEARCH). Before
# every example began with a session (2026-12-07) three of four examples did nothing, so
# this is about the work the larger search did then.
TestSqlite.settings = settings(TestSqlite.settings, **profiles.service_search())
TestDatabase.settings = settings(TestDatabase.settings, **profiles.service_search())
assert len(KINDS) == 3  # one test per service
