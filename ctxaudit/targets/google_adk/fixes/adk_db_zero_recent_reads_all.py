"""ADK-DB-ZERO-RECENT-READS-ALL (S2): the database service applies num_recent_events
whenever it is given, 0 included, as GetSessionConfig documents (and 2.13.0 does)."""

from ctxaudit.fixes import Edit, Fix, Form

DATABASE = "google/adk/sessions/database_session_service.py"
TRUTHY = "      if config and config.num_recent_events:\n"
GIVEN = "      if config and config.num_recent_events is not None:\n"

FIX = Fix(
    finding="ADK-DB-ZERO-RECENT-READS-ALL",
    why="get_session limits the events read to num_recent_events whenever it is given, so "
    "0 reads none, as GetSessionConfig documents",
    forms=(Form(versions="*", edits=(Edit(DATABASE, TRUTHY, GIVEN),)),),
)
