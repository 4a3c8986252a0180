"""A session store (S2, S3, S6 for what a harness keeps between runs): sessions of
events and state, written and read back. Pure.

A store keeps sessions, each named by (app, user, id): an ordered list of events and a
state. An event has an id, an author, a text, a time and a state delta. Appending a
final event (not a partial chunk of a streamed answer) stores it once, at the end, and
applies its delta by the key's scope:

- ``app:`` keys to the app's state, which every session of the app reads;
- ``user:`` keys to the user's state, which every session of that user in the app reads;
- ``temp:`` keys to nothing stored: they live in one invocation's session object only;
- any other key to the session's own state.

A partial event is stored nowhere. A read returns the session's events in the order they
were appended (where asked, only the newest ``recent`` of them, or only those at or after
a time) and its state: its own keys, then the user's and the app's under their prefixes.
A deleted session is gone with its events; the user's and the app's states outlive it.
A store that persists reads back the same from a new service object over its storage.

The harness's documented contract is :class:`Contract`'s parameters.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

Key = tuple[str, str, str]  # (app, user, session id)
APP, USER, TEMP = "app:", "user:", "temp:"


@dataclass(frozen=True)
class Event:
    id: str
    author: str
    text: str
    time: float
    delta: tuple[tuple[str, Any], ...] = ()
    partial: bool = False


@dataclass(frozen=True)
class Contract:
    #: a read of the newest ``recent`` events with ``recent`` 0 returns none (True), or
    #: every event (False: 0 is no filter); None: undocumented, never read
    zero_recent_is_none: bool | None = True


@dataclass(frozen=True)
class Read:
    events: tuple[Event, ...]
    state: Mapping[str, Any]


@dataclass(frozen=True)
class Store:
    contract: Contract = Contract()
    events: Mapping[Key, tuple[Event, ...]] = field(default_factory=dict)
    state: Mapping[Key, Mapping[str, Any]] = field(default_factory=dict)
    user_state: Mapping[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)
    app_state: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def create(self, key: Key, state: Mapping[str, Any]) -> Store:
        """A new session, empty, its initial state applied as an event's delta would be."""
        assert key not in self.events, f"{key} exists"
        store = replace(self, events={**self.events, key: ()}, state={**self.state, key: {}})
        return store._apply(key, tuple(state.items()))

    def append(self, key: Key, event: Event) -> Store:
        """``event`` appended to the session (a partial event stores nothing)."""
        assert key in self.events, f"no session {key}"
        if event.partial:
            return self
        store = replace(self, events={**self.events, key: (*self.events[key], event)})
        return store._apply(key, event.delta)

    def _apply(self, key: Key, delta: tuple[tuple[str, Any], ...]) -> Store:
        app, user, _ = key
        own, users, apps = dict(self.state[key]), dict(self.user_state), dict(self.app_state)
        for k, v in delta:
            if k.startswith(APP):
                apps[app] = {**apps.get(app, {}), k[len(APP) :]: v}
            elif k.startswith(USER):
                users[(app, user)] = {**users.get((app, user), {}), k[len(USER) :]: v}
            elif not k.startswith(TEMP):
                own[k] = v
        return replace(self, state={**self.state, key: own}, user_state=users, app_state=apps)

    def read(self, key: Key, recent: int | None = None, after: float | None = None) -> Read | None:
        """The session as a read returns it, or None when there is none."""
        if key not in self.events:
            return None
        events = self.events[key]
        if after is not None:
            events = tuple(e for e in events if e.time >= after)
        if recent == 0 and self.contract.zero_recent_is_none is None:
            raise ValueError("a read of the newest 0 events, which the contract leaves open")
        if recent is not None and (recent > 0 or self.contract.zero_recent_is_none):
            events = events[max(len(events) - recent, 0) :] if recent else ()
        app, user, _ = key
        state = dict(self.state[key])
        state |= {USER + k: v for k, v in self.user_state.get((app, user), {}).items()}
        state |= {APP + k: v for k, v in self.app_state.get(app, {}).items()}
        return Read(events, state)

    def sessions(self, app: str, user: str) -> frozenset[str]:
        """The ids of the user's sessions in the app."""
        return frozenset(k[2] for k in self.events if k[:2] == (app, user))

    def delete(self, key: Key) -> Store:
        """The session gone, with its events (deleting none changes nothing)."""
        events = {k: v for k, v in self.events.items() if k != key}
        return replace(self, events=events, state={k: v for k, v in self.state.items() if k != key})
