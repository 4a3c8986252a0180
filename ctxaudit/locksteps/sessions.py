"""The session lockstep (S2, S3, S6 for a store): any harness's session service, through
its adapter (:mod:`ctxaudit.concerns.sessions`), beside ``model/sessions.py``.

One machine drives a store of two apps' sessions for two users: sessions are created with
an initial state; events are appended to them (by the user or the agent, final or a
partial chunk of a streamed answer, each carrying state changes of every scope: the
session's own keys, ``user:``, ``app:`` and ``temp:`` ones; some at the same time as the
last); sessions are read back whole, as their newest few events or from a time on (at,
one before and one after an event's time), listed and deleted (then read, and created
again under the same name); a store that persists is reopened by a new service object
over the same storage and reads every session back. A read in a registered finding's
region (``left_out``) is not compared. Every write is read back at once,
and every read is first held to the store's invariants (SI1-SI4,
:mod:`ctxaudit.invariants.sessions`), which do not trust the model, then compared with
the model: the events in order, each as written, and the state merged from its scopes.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test

from ctxaudit import shapes
from ctxaudit.concerns.sessions import (
    AFTER,
    CAPABILITIES,
    LISTED,
    PERSISTENT,
    RECENT,
    Event,
    Read,
    ReadStep,
    SessionsAdapter,
)
from ctxaudit.invariants.sessions import check_read
from ctxaudit.locksteps.folders import end_example, example_folder
from ctxaudit.locksteps.notes import event as _event
from ctxaudit.locksteps.notes import note
from model.sessions import TEMP, Contract, Key, Store
from model.sessions import Event as ModelEvent

T0 = 1_800_000_000.0
APPS, USERS = ("a1", "a2"), ("u1", "u2")
#: state keys of every scope, a few values each, so writes overwrite one another
KEYS = ("k", "n", "user:k", "user:n", "app:k", "temp:k")
deltas = st.lists(st.tuples(st.sampled_from(KEYS), st.integers(0, 3)), max_size=3).map(
    lambda pairs: tuple(dict(pairs).items())
)

#: the shape coverage this lockstep reports (ctxaudit/shapes.py)
READS = "sessions: what a read asked for × what the session had been through"
ASKED = ("whole", "newest n", "from a time on")
HISTORY = ("appended only", "partial chunks", "same-time events", "reopened", "recreated")


def event_id(n: int) -> str:
    """The ``n``th event's id, sorting before the ids of the events appended before it
    (``z0``, ``y1`` ... ``a25``, ``z26``): a store that orders events of the same time by
    their ids, not by when they were appended, shows it."""
    return f"{'zyxwvutsrqponmlkjihgfedcba'[n % 26]}{n}"


def view(read: Read | None) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
    if read is None:
        return None
    return tuple((e.id, e.author, e.text, e.delta) for e in read.events), read.state


def model_view(store: Store, key: Key, recent: int | None, after: float | None) -> Any:
    read = store.read(key, recent, after)
    if read is None:
        return None
    kept = [
        (e.id, e.author, e.text, tuple(sorted(d for d in e.delta if not d[0].startswith(TEMP))))
        for e in read.events
    ]
    return tuple(kept), dict(read.state)


#: the registered finding whose region a read is in, or None
LeftOut = Callable[[ReadStep], str | None]


def never(_step: ReadStep) -> None:
    """No registered finding: every read is compared."""
    return None


def make_machine(
    adapter: SessionsAdapter, left_out: LeftOut = never
) -> type[RuleBasedStateMachine]:
    """The session lockstep of ``adapter``'s store (``left_out``: its target's registered
    findings' regions)."""
    has = adapter.capabilities
    unknown = has - CAPABILITIES
    if unknown:
        raise ValueError(f"{adapter.name}: unknown capabilities {sorted(unknown)}")
    asked = [
        a for a, cap in zip(ASKED, (None, RECENT, AFTER), strict=True) if cap is None or cap in has
    ]
    history = [h for h in HISTORY if h != "reopened" or PERSISTENT in has]
    # a table per store: a harness has several (in memory, a file, a database)
    table = f"{READS} ({adapter.name})"
    shapes.declare(table, ("the read", tuple(asked)), ("the session had", tuple(history)))
    contract = Contract(zero_recent_is_none=adapter.contract.zero_recent_is_none)

    class SessionLockstep(RuleBasedStateMachine):
        # the first session is created before any rule runs: Hypothesis enables a random
        # subset of the rules in each example (swarm testing), and an example whose
        # ``create`` is disabled would otherwise have no session for any other rule
        @initialize(app=st.sampled_from(APPS), user=st.sampled_from(USERS), state=deltas)
        def setup(self, app: str, user: str, state: tuple[tuple[str, Any], ...]) -> None:
            note(adapter.name)
            self.folder = example_folder("sessions")
            self.store = adapter.store(self.folder)
            self.model = Store(contract)
            self.now = T0
            self.ids = itertools.count()
            self.written: dict[Key, list[Event]] = {}  # since each session's creation
            self.had: dict[Key, set[str]] = {}  # what each session has been through
            self.known: list[Key] = []  # every key ever created (deleted ones too)
            self.create(app, user, state)

        def teardown(self) -> None:
            end_example(getattr(self, "store", None), getattr(self, "folder", None))

        def pick(self, data: st.DataObject, live: bool = True) -> Key | None:
            keys = [k for k in self.known if (k in self.model.events) == live]
            return data.draw(st.sampled_from(keys), label="session") if keys else None

        @rule(app=st.sampled_from(APPS), user=st.sampled_from(USERS), state=deltas)
        def create(self, app: str, user: str, state: tuple[tuple[str, Any], ...]) -> None:
            key = (app, user, f"s{next(self.ids)}")
            note(f"create({key!r}, {dict(state)!r})")
            self.store.create(key, dict(state))
            self.model = self.model.create(key, dict(state))
            self.written[key], self.had[key] = [], {"appended only"}
            self.known.append(key)
            self.reads(key)  # every write is read back

        @rule(data=st.data())
        def recreate(self, data: st.DataObject) -> None:
            """A deleted session's name is used again: nothing of the old one comes back."""
            key = self.pick(data, live=False)
            if key is not None:
                self.create_again(key)

        def create_again(self, key: Key) -> None:
            note(f"create({key!r}, {{}})  # again")
            self.store.create(key, {})
            self.model = self.model.create(key, {})
            self.written[key], self.had[key] = [], {"recreated"}
            self.reads(key)

        @rule(
            data=st.data(),
            author=st.sampled_from(("user", "agent")),
            size=st.integers(0, 30),
            delta=deltas,
            partial=st.integers(0, 4).map(lambda n: n == 0),
            same_time=st.integers(0, 3).map(lambda n: n == 0),
        )
        def append(
            self,
            data: st.DataObject,
            author: str,
            size: int,
            delta: tuple[tuple[str, Any], ...],
            partial: bool,
            same_time: bool,
        ) -> None:
            key = self.pick(data)
            if key is None:
                return
            # a same-time event takes the time of its session's last final event, as an
            # agent's own events do (google-adk's compaction event takes the timestamp of
            # the last event it compacts), however many events other sessions had since
            last = [e.time for e in self.written[key] if not e.partial][-1:]
            if same_time and last:
                time = last[0]
                self.had[key].add("same-time events")
            else:
                self.now += 1.0
                time = self.now
            id = event_id(next(self.ids))
            event = Event(id, author, f"[{id}]" + "w" * size, time, delta, partial)
            note(f"append({key!r}, {event!r})")
            self.store.append(key, event)
            self.model = self.model.append(
                key, ModelEvent(id, author, event.text, time, delta, partial)
            )
            self.written[key].append(event)
            if partial:
                self.had[key].add("partial chunks")
            self.reads(key)

        @rule(data=st.data())
        def read(self, data: st.DataObject) -> None:
            live = self.pick(data)
            key = live if live is not None else self.pick(data, live=False)
            if key is None:
                return
            times = [e.time for e in self.written.get(key, []) if not e.partial]
            self.reads(key, data.draw(st.sampled_from(times or [T0]), label="near"))

        def reads(self, key: Key, at: float | None = None) -> None:
            """``key`` read back in every form the store offers: whole, as the newest n at
            every boundary (none, one, all but one, all, more), and from a time on, at
            ``at`` (by default the newest event's time), just before and just after it."""
            self.check(key)
            final = [e for e in self.written.get(key, []) if not e.partial]
            if "newest n" in asked:
                n = len(final)
                # 0 only where the store documents what it means
                zero = {0} if adapter.contract.zero_recent_is_none is not None else set()
                for recent in sorted(zero | ({1, n - 1, n, n + 1} - {0, -1})):
                    self.check(key, "newest n", recent=recent)
            if "from a time on" in asked:
                at = at if at is not None else final[-1].time if final else T0
                for by in (-1.0, -0.5, 0.0, 0.5):
                    self.check(key, "from a time on", after=at + by)

        def check(
            self,
            key: Key,
            how: str = "whole",
            recent: int | None = None,
            after: float | None = None,
        ) -> None:
            """One read of ``key``, held to the invariants, then compared with the model."""
            got = self.store.read(key, recent, after)
            note(f"read({key!r}, recent={recent!r}, after={after!r}) -> {view(got)!r}")
            times = tuple(e.time for e in self.written.get(key, []) if not e.partial)
            step = ReadStep(times, recent, after, "reopened" in self.had.get(key, set()))
            finding = left_out(step)
            if finding is not None:  # a read changes nothing: the model goes on as it is
                _event(f"left out: {finding}")
                return
            want = model_view(self.model, key, recent, after)
            if want is None:
                assert got is None, f"S6: a deleted session {key} reads back: {view(got)}"
                return
            assert got is not None, f"S6: the session {key} is gone"
            broken = check_read(
                self.written[key], got, recent, after, adapter.contract.zero_recent_is_none
            )
            assert not broken, "S6: the store broke its invariants:\n" + "\n".join(broken)
            for had in self.had[key]:
                shapes.reached(table, how, had)
            _event(f"read {how}")
            assert view(got)[0] == want[0], (  # type: ignore[index]
                f"S2: the events read differ from the model's:\n{view(got)[0]}\n!=\n{want[0]}"  # type: ignore[index]
            )
            assert got.state == want[1], (
                f"S2: the state read differs from the model's: {got.state} != {want[1]}"
            )

        if LISTED in has:

            @rule(app=st.sampled_from(APPS), user=st.sampled_from(USERS))
            def listed(self, app: str, user: str) -> None:
                got = self.store.sessions(app, user)
                want = set(self.model.sessions(app, user))
                assert got == want, (
                    f"S6: {app}/{user}'s sessions are {sorted(got)}, not {sorted(want)}"
                )

        @rule(data=st.data(), again=st.booleans())
        def delete(self, data: st.DataObject, again: bool) -> None:
            """A session deleted, and read (gone); maybe its name used again at once."""
            key = self.pick(data)
            if key is None:
                return
            note(f"delete({key!r})")
            self.store.delete(key)
            self.model = self.model.delete(key)
            self.check(key)
            if again:
                self.create_again(key)

        if PERSISTENT in has:

            @rule()
            def reopen(self) -> None:
                """A new service object over the same storage (a restart)."""
                note("reopen()")
                self.store.reopen()
                for key in self.model.events:  # what the old one wrote, read by the new
                    self.had[key].add("reopened")
                    self.reads(key)

    return SessionLockstep


def run_lockstep(adapter: SessionsAdapter, left_out: LeftOut = never, settings: Any = None) -> None:
    """Run the session lockstep on ``adapter`` as one test (under the current profile, or
    ``settings``)."""
    run_state_machine_as_test(make_machine(adapter, left_out), settings=settings)
