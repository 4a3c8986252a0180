"""Each google-adk finding's seed-free program: plain google-adk, no ctxaudit, exit 1 when
the finding reproduces (what an upstream report quotes)."""

from pathlib import Path

#: what the programs import: loaded once, before each program forks, where a test runs
#: several (tests/finding_programs.py); a module a release lacks is not preloaded
PRELOAD = (
    "google.adk.events.event",
    "google.adk.sessions",
    "google.adk.sessions.database_session_service",
    "google.genai.types",
)


def program(finding_id: str) -> Path:
    """The program of a finding: ``ADK-DB-SAME-TIME-REORDERED`` -> ``adk_db_same_time_reordered.py``."""
    return Path(__file__).with_name(finding_id.lower().replace("-", "_") + ".py")
