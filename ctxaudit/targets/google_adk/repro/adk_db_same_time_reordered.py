"""ADK-DB-SAME-TIME-REORDERED: DatabaseSessionService reads back a session's events of
the same timestamp in the order of their ids, not the order they were appended.

Two events are appended to one session at the same timestamp, "z-first" then
"a-second" (ADK appends such events itself: a compaction event takes the timestamp of
the last event it compacts). InMemorySessionService and SqliteSessionService read them
back in the order they were appended; DatabaseSessionService (on SQLite here) reads
"a-second" first. The model's contents are built sorted by (timestamp, position in
session.events), so the order a read gives is the order the model is sent. Exit 1 when
the database service reads them out of the append order.
"""

import asyncio
import sys
import tempfile
from pathlib import Path

from google.adk.events.event import Event
from google.adk.sessions import InMemorySessionService
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.genai import types

APPENDED = ["z-first", "a-second"]


async def read_back(service) -> list[str]:
    await service.create_session(app_name="app", user_id="u", session_id="s")
    for id in APPENDED:  # at the same time, in this order
        session = await service.get_session(app_name="app", user_id="u", session_id="s")
        content = types.Content(role="user", parts=[types.Part(text=id)])
        event = Event(id=id, invocation_id="i", author="user", content=content, timestamp=1.8e9)
        await service.append_event(session, event)
    session = await service.get_session(app_name="app", user_id="u", session_id="s")
    return [e.id for e in session.events]


async def main() -> int:
    memory = await read_back(InMemorySessionService())
    folder = Path(tempfile.mkdtemp())
    database = DatabaseSessionService(f"sqlite+aiosqlite:///{folder / 'sessions.db'}")
    stored = await read_back(database)
    await database.db_engine.dispose()
    print(f"appended {APPENDED}; in memory {memory}; database {stored}")
    return 1 if memory == APPENDED and stored != APPENDED else 0


sys.exit(asyncio.run(main()))
