"""google-adk's session services as the session store concern's adapter
(:mod:`ctxaudit.concerns.sessions`): ``InMemorySessionService``,
``SqliteSessionService`` and ``DatabaseSessionService`` (SQLAlchemy, on a SQLite file in
the run's folder), driven through their public API as the runner drives them.

Runs inside a google-adk environment. The services are asynchronous; each store runs them
on one event loop of its own (a database engine is bound to the loop it was made on). An
event is appended as the runner appends it, to the session as just read
(``get_session`` then ``append_event``); a read is ``get_session`` with the
``GetSessionConfig`` the lockstep asks for. A persistent store is reopened as a restart
would: a new service object over the same file.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from google.adk.events.event import Event as AdkEvent
from google.adk.events.event_actions import EventActions
from google.adk.sessions import InMemorySessionService
from google.adk.sessions.base_session_service import GetSessionConfig
from google.genai import types

from ctxaudit.concerns.sessions import (
    AFTER,
    LISTED,
    PERSISTENT,
    RECENT,
    Contract,
    Event,
    Read,
    Stored,
)

Key = tuple[str, str, str]
#: the services, by the name a test id shows
KINDS = ("in-memory", "sqlite", "database")


def contract() -> Contract:
    """The release's documented contract: what ``GetSessionConfig`` says of a read of the
    newest 0 events (1.39 on: none; 1.20 says nothing, so such a read is not judged)."""
    from google.adk.sessions.base_session_service import GetSessionConfig

    says = "if 0, no events are returned" in (GetSessionConfig.__doc__ or "")
    return Contract(
        zero_recent_is_none=True if says else None,
        quoted=(
            "GetSessionConfig: 'num_recent_events: ... if greater than 0, returns at most "
            "given number of recent events; if 0, no events are returned'; 'after_timestamp: "
            "... returns events with timestamp >= the given time'"
            if says
            else "GetSessionConfig (this release): no word on what num_recent_events=0 reads"
        ),
    )


def service(kind: str, folder: Path) -> Any:
    """A new service object of ``kind`` over the storage in ``folder``."""
    if kind == "in-memory":
        return InMemorySessionService()
    if kind == "sqlite":
        from google.adk.sessions.sqlite_session_service import SqliteSessionService

        return SqliteSessionService(str(folder / "sessions.sqlite"))
    from google.adk.sessions.database_session_service import DatabaseSessionService

    return DatabaseSessionService(f"sqlite+aiosqlite:///{folder / 'sessions.db'}")


def text_of(event: AdkEvent) -> str:
    parts = event.content.parts if event.content and event.content.parts else []
    return "".join(p.text or "" for p in parts)


class Store:
    """One service over its storage, run on a loop of its own."""

    def __init__(self, kind: str, folder: Path) -> None:
        self.kind, self.folder = kind, folder
        self.loop = asyncio.new_event_loop()
        self.service = service(kind, folder)

    def run(self, coroutine: Any) -> Any:
        return self.loop.run_until_complete(coroutine)

    def create(self, key: Key, state: dict[str, Any]) -> None:
        app, user, id = key
        self.run(
            self.service.create_session(app_name=app, user_id=user, session_id=id, state=state)
        )

    def append(self, key: Key, event: Event) -> None:
        app, user, id = key
        session = self.run(self.service.get_session(app_name=app, user_id=user, session_id=id))
        role = "user" if event.author == "user" else "model"
        self.run(
            self.service.append_event(
                session,
                AdkEvent(
                    id=event.id,
                    invocation_id=f"inv-{event.id}",
                    author=event.author,
                    content=types.Content(role=role, parts=[types.Part(text=event.text)]),
                    timestamp=event.time,
                    partial=event.partial or None,
                    actions=EventActions(state_delta=dict(event.delta)),
                ),
            )
        )

    def read(self, key: Key, recent: int | None, after: float | None) -> Read | None:
        app, user, id = key
        config = None
        if recent is not None or after is not None:
            config = GetSessionConfig(num_recent_events=recent, after_timestamp=after)
        session = self.run(
            self.service.get_session(app_name=app, user_id=user, session_id=id, config=config)
        )
        if session is None:
            return None
        events = tuple(
            Stored(e.id, e.author, text_of(e), tuple(sorted(e.actions.state_delta.items())))
            for e in session.events
        )
        return Read(events, dict(session.state))

    def sessions(self, app: str, user: str) -> set[str]:
        listed = self.run(self.service.list_sessions(app_name=app, user_id=user))
        return {s.id for s in listed.sessions}

    def delete(self, key: Key) -> None:
        app, user, id = key
        self.run(self.service.delete_session(app_name=app, user_id=user, session_id=id))

    def reopen(self) -> None:
        self.release()
        self.service = service(self.kind, self.folder)

    def release(self) -> None:
        """Let go of the storage as a process that ends would (a database's engine)."""
        engine = getattr(self.service, "db_engine", None)
        if engine is not None:
            self.run(engine.dispose())

    def close(self) -> None:
        self.release()
        self.loop.close()


class Sessions:
    """The concern's adapter for one of google-adk's session services."""

    def __init__(self, kind: str, version: str = "") -> None:
        self.kind = kind
        self.contract = contract()
        self.name = f"google-adk {version} {kind} session service".replace("  ", " ")
        persistent = {PERSISTENT} if kind != "in-memory" else set()
        self.capabilities = frozenset({RECENT, AFTER, LISTED} | persistent)

    def store(self, folder: Path) -> Store:
        return Store(self.kind, folder)
