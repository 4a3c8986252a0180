"""google-adk findings: where a release breaks a property. The one reviewed place.

Each is a :class:`~ctxaudit.targets.base.ReleaseFinding` over the lockstep's read
(:class:`Step`): the property, the releases, the doc line it breaks, the narrowest region
where it shows and the regression test that asserts it still reproduces.

``CTXAUDIT_FINDINGS`` overrides the registry for one run (the audit uses it): ``all``
or a comma-separated list of ids (``none``: none).
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxaudit.concerns.sessions import ReadStep
from ctxaudit.targets.base import ReleaseFinding, first_in_region, registered_for

NAME = "google-adk"
FINDINGS_TESTS = "tests/google_adk/inenv/test_findings.py"


@dataclass(frozen=True)
class Step:
    """A read of the lockstep, as a region reads it: which service, and the read."""

    service: str  # "in-memory", "sqlite" or "database"
    read: ReadStep


Finding = ReleaseFinding[Step]


def _test(name: str) -> str:
    return f"{FINDINGS_TESTS}::{name}"


FINDINGS: tuple[Finding, ...] = (
    Finding(
        "ADK-DB-SAME-TIME-REORDERED",
        frozenset({"1.20.0", "1.39.1", "2.13.0"}),
        "S6",
        "DatabaseSessionService reads a session's events of the same timestamp in the "
        "order of their ids (before 2.x: in whatever order the database returns them), not "
        "the order they were appended (InMemorySessionService and "
        "SqliteSessionService keep the append order); ADK appends such events itself (a "
        "compaction event takes the timestamp of the last event it compacts) and builds "
        "the model's contents sorted by (timestamp, position in session.events), so a "
        "session read back from the database can send the model its history reordered",
        "Session.events: 'The events of the session, e.g. user input, model response, "
        "function call/response, etc.' in the order the runner appended them, as the other "
        "session services return them; DatabaseSessionService.get_session: 'Break "
        "timestamp ties on id ... Without it the database is free to return tied events "
        "in a different order on every read' (a deterministic order, not the append order)",
        "a read through the database service of a session holding two final events of the "
        "same time",
        lambda s: s.service == "database" and s.read.same_time,
        _test("test_adk_db_same_time_reordered"),
    ),
    Finding(
        "ADK-DB-ZERO-RECENT-READS-ALL",
        frozenset({"1.39.1"}),
        "S2",
        "DatabaseSessionService.get_session with num_recent_events=0 returns every event "
        "of the session, where GetSessionConfig documents that 0 returns none "
        "(InMemorySessionService and SqliteSessionService return none): the limit is "
        "applied only when it is truthy (fixed by 2.13.0)",
        "GetSessionConfig: 'num_recent_events: ... if greater than 0, returns at most given "
        "number of recent events; if 0, no events are returned'",
        "a read of the newest 0 events through the database service",
        lambda s: s.service == "database" and s.read.recent == 0,
        _test("test_adk_db_zero_recent_reads_all"),
    ),
)

BY_ID = {f.id: f for f in FINDINGS}


def registered(version: str) -> list[Finding]:
    """The findings registered for a release (``CTXAUDIT_FINDINGS`` overrides)."""
    return registered_for(FINDINGS, version)


def left_out(version: str, step: Step) -> str | None:
    """The registered finding whose region ``step`` is in, if any."""
    return first_in_region(registered(version), step)
