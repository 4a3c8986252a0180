"""ADK-DB-ZERO-RECENT-READS-ALL: DatabaseSessionService.get_session with
GetSessionConfig(num_recent_events=0) returns every event of the session.

GetSessionConfig documents: "num_recent_events: ... if greater than 0, returns at most
given number of recent events; if 0, no events are returned". Two events are appended to
a session, then read with num_recent_events=0: InMemorySessionService returns none, the
database service (on SQLite here) returns both. Exit 1 when it does.
"""

import asyncio
import sys
import tempfile
from pathlib import Path

from google.adk.events.event import Event
from google.adk.sessions import InMemorySessionService
from google.adk.sessions.base_session_service import GetSessionConfig
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.genai import types


async def newest_zero(service) -> list[str]:
    await service.create_session(app_name="app", user_id="u", session_id="s")
    for n, id in enumerate(("first", "second")):
        session = await service.get_session(app_name="app", user_id="u", session_id="s")
        content = types.Content(role="user", parts=[types.Part(text=id)])
        event = Event(id=id, invocation_id="i", author="user", content=content, timestamp=1.8e9 + n)
        await service.append_event(session, event)
    config = GetSessionConfig(num_recent_events=0)
    session = await service.get_session(app_name="app", user_id="u", session_id="s", config=config)
    return [e.id for e in session.events]


async def main() -> int:
    memory = await newest_zero(InMemorySessionService())
    folder = Path(tempfile.mkdtemp())
    database = DatabaseSessionService(f"sqlite+aiosqlite:///{folder / 'sessions.db'}")
    stored = await newest_zero(database)
    await database.db_engine.dispose()
    print(f"num_recent_events=0: in memory {memory}; database {stored}")
    return 1 if memory == [] and stored != [] else 0


sys.exit(asyncio.run(main()))
