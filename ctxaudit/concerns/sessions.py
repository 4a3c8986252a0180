"""The session store concern (S2, S3, S6 for what a harness keeps between runs): what a
harness's adapter must do for the session lockstep (:mod:`ctxaudit.locksteps.sessions`)
to drive its session service.

A harness keeps a conversation's events and state in a session service (google-adk's
``InMemorySessionService``, ``SqliteSessionService`` and ``DatabaseSessionService``), and
builds the next run's context from what it reads back. The lockstep creates sessions,
appends events to them (final ones, and partial chunks of a streamed answer that must not
be stored), reads them back (whole, the newest few, or from a time on), lists and deletes
them, and, for a store that persists, opens a new service object over the same storage
and reads again. Each read is compared with ``model/sessions.py``.

An event's state delta is keyed by scope, as the harness documents it: ``app:`` keys to
the app's state, ``user:`` keys to the user's, ``temp:`` keys to nothing stored, any other
key to the session's own state.

What the adapter declares: its :data:`CAPABILITIES` (only those are drawn) and its
documented :class:`Contract`, quoted, the model's parameters.

Nothing here imports the model or Hypothesis: an adapter imports this module wherever its
harness is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

#: what a store may have besides create, append, read and delete
PERSISTENT = "persistent"  # a new service object over the same storage reads it back
RECENT = "recent"  # a read of the newest n events
AFTER = "after"  # a read of the events at or after a time
LISTED = "listed"  # it lists a user's sessions
CAPABILITIES = frozenset({PERSISTENT, RECENT, AFTER, LISTED})


@dataclass(frozen=True)
class Event:
    """An event as the lockstep appends it."""

    id: str
    author: str  # "user", or the agent's name
    text: str
    time: float  # seconds since the epoch
    delta: tuple[tuple[str, Any], ...] = ()  # the state changes it carries
    partial: bool = False  # a chunk of a streamed answer, never stored


@dataclass(frozen=True)
class Stored:
    """An event as a read returns it."""

    id: str
    author: str
    text: str
    delta: tuple[tuple[str, Any], ...]  # its stored state delta, sorted by key


@dataclass(frozen=True)
class Read:
    """A session as a read returns it."""

    events: tuple[Stored, ...]
    state: dict[str, Any]  # its own keys, and the user's and the app's under their prefixes


@dataclass(frozen=True)
class ReadStep:
    """One read, as a registered finding's region reads it (the target's ``left_out``)."""

    times: tuple[float, ...]  # the times of the session's final events, as appended
    recent: int | None
    after: float | None
    reopened: bool  # the store was reopened since the session was created

    @property
    def same_time(self) -> bool:
        """The session holds two final events of the same time."""
        return len(set(self.times)) < len(self.times)


@dataclass(frozen=True)
class Contract:
    """Where a harness's documented contract differs from the specification's defaults,
    each with the doc text that says so."""

    #: a read of the newest 0 events returns none (True), every event (False: 0 is no
    #: filter), or the docs do not say (None: such a read is never judged)
    zero_recent_is_none: bool | None
    quoted: str


class SessionStore(Protocol):
    """One session service over its storage. ``key`` is (app, user, session id)."""

    def create(self, key: tuple[str, str, str], state: dict[str, Any]) -> None:
        """Create the session with an initial state (scoped as a delta is)."""

    def append(self, key: tuple[str, str, str], event: Event) -> None:
        """Append ``event`` as the harness's runner does: to the session as just read."""

    def read(
        self, key: tuple[str, str, str], recent: int | None, after: float | None
    ) -> Read | None:
        """The session, or None when there is none (``recent``: only the newest so many
        events, :data:`RECENT`; ``after``: only those at or after, :data:`AFTER`)."""

    def sessions(self, app: str, user: str) -> set[str]:
        """The ids of the user's sessions in the app (:data:`LISTED`)."""

    def delete(self, key: tuple[str, str, str]) -> None:
        """Delete the session."""

    def reopen(self) -> None:
        """Replace the service with a new one over the same storage (:data:`PERSISTENT`)."""

    def close(self) -> None:
        """Release the storage (the example is over)."""


class SessionsAdapter(Protocol):
    """How the session lockstep reaches a harness's session service."""

    #: how reports name it ("google-adk DatabaseSessionService (SQLite)")
    name: str
    #: which of :data:`CAPABILITIES` it has
    capabilities: frozenset[str]
    contract: Contract

    def store(self, folder: Path) -> SessionStore:
        """A new, empty store whose storage (if any) lives in ``folder``."""
