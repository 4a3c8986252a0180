"""The session store concern's lockstep (``ctxaudit/locksteps/sessions.py``) on a plain
store written here from the properties alone (a JSON file per store: sessions of events
and state by scope, read back whole, as the newest few or from a time on): it holds on
the store as written, persisted or not; it fails on each planted break with the
invariant or the model comparison that sees it; and the model holds to the invariants."""

from __future__ import annotations

import dataclasses
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from ctxaudit.concerns.sessions import (
    CAPABILITIES,
    Contract,
    Event,
    Read,
    Stored,
)
from ctxaudit.invariants.sessions import check_read
from ctxaudit.locksteps.sessions import deltas, run_lockstep
from model.sessions import Event as ModelEvent
from model.sessions import Store

QUICK = settings(
    max_examples=80, stateful_step_count=25, derandomize=True, database=None, deadline=None,
    suppress_health_check=list(HealthCheck),
)  # fmt: skip
FIRST_FAILURE = settings(QUICK, phases=[Phase.generate])
CONTRACT = Contract(zero_recent_is_none=True, quoted="the test's")


@dataclasses.dataclass
class FileStore:
    """Sessions in a JSON file: each key's events and own state, and each user's and
    app's state; a reopened store reads the file again."""

    path: Path
    breaks: frozenset[str]
    data: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        self.data = {"sessions": {}, "users": {}, "apps": {}}
        self.save()

    def save(self) -> None:
        self.path.write_text(json.dumps(self.data))

    def name(self, key: tuple[str, str, str]) -> str:
        return "/".join(key)

    def apply(self, key: tuple[str, str, str], delta: dict[str, Any]) -> None:
        app, user, _ = key
        own = self.data["sessions"][self.name(key)]["state"]
        for k, v in delta.items():
            if k.startswith("app:"):
                self.data["apps"].setdefault(app, {})[k[4:]] = v
            elif k.startswith("user:"):
                scope = (
                    self.name(key) if "user state per session" in self.breaks else app + "/" + user
                )
                self.data["users"].setdefault(scope, {})[k[5:]] = v
            elif not k.startswith("temp:"):
                own[k] = v

    def create(self, key: tuple[str, str, str], state: dict[str, Any]) -> None:
        old = self.data["sessions"].get(self.name(key))
        events = old["events"] if old and "delete keeps events" in self.breaks else []
        self.data["sessions"][self.name(key)] = {"events": events, "state": {}}
        self.apply(key, state)
        self.save()

    def append(self, key: tuple[str, str, str], event: Event) -> None:
        if event.partial and "partial stored" not in self.breaks:
            return
        delta = {} if event.partial else dict(event.delta)
        kept = {
            k: v
            for k, v in delta.items()
            if "temp persisted" in self.breaks or not k.startswith("temp:")
        }
        stored = {
            "id": event.id,
            "author": event.author,
            "text": event.text,
            "time": event.time,
            "delta": kept,
        }
        self.data["sessions"][self.name(key)]["events"].append(stored)
        self.apply(key, delta)
        self.save()

    def read(
        self, key: tuple[str, str, str], recent: int | None, after: float | None
    ) -> Read | None:
        session = self.data["sessions"].get(self.name(key))
        if session is None or session.get("gone"):
            return None
        events = session["events"]
        if after is not None:
            strict = "after is strict" in self.breaks
            events = [e for e in events if e["time"] > after or (not strict and e["time"] == after)]
        if recent is not None:
            n = recent + ("one too many" in self.breaks)
            events = events[max(len(events) - n, 0) :] if n else []
        app, user, _ = key
        scope = self.name(key) if "user state per session" in self.breaks else app + "/" + user
        state = dict(session["state"])
        state |= {"user:" + k: v for k, v in self.data["users"].get(scope, {}).items()}
        state |= {"app:" + k: v for k, v in self.data["apps"].get(app, {}).items()}
        shown = tuple(
            Stored(e["id"], e["author"], e["text"], tuple(sorted(e["delta"].items())))
            for e in events
        )
        return Read(shown, state)

    def sessions(self, app: str, user: str) -> set[str]:
        return {
            n.split("/")[2]
            for n, session in self.data["sessions"].items()
            if n.startswith(f"{app}/{user}/") and not session.get("gone")
        }

    def delete(self, key: tuple[str, str, str]) -> None:
        if "delete keeps events" in self.breaks:  # the row stays, marked gone
            self.data["sessions"][self.name(key)]["gone"] = True
        else:
            self.data["sessions"].pop(self.name(key))
        self.save()

    def reopen(self) -> None:
        data = json.loads(self.path.read_text())
        if "reopen loses the newest" in self.breaks:
            for session in data["sessions"].values():
                session["events"] = session["events"][:-1]
        if "reopen doubles" in self.breaks:
            for session in data["sessions"].values():
                session["events"] = session["events"] + session["events"][-1:]
        self.data = data

    def close(self) -> None:
        pass


@dataclasses.dataclass
class Adapter:
    breaks: frozenset[str] = frozenset()
    name: str = "the test's file store"
    capabilities: frozenset[str] = CAPABILITIES
    contract: Contract = CONTRACT

    def store(self, folder: Path) -> FileStore:
        return FileStore(folder / "store.json", self.breaks)


def test_the_store_as_written_holds(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    run_lockstep(Adapter(), settings=QUICK)
    # each example's folder is removed with it: none is left behind in the user's tmp
    assert list(tmp_path.iterdir()) == []


def test_a_store_that_only_creates_appends_reads_and_deletes_holds() -> None:
    run_lockstep(Adapter(capabilities=frozenset(), name="a bare store"), settings=QUICK)


@pytest.mark.parametrize(
    ("brk", "opens"),
    [
        ("partial stored", "S6: SI2:"),
        ("temp persisted", "S6: SI3:"),
        ("reopen loses the newest", "S6: SI4:"),
        ("reopen doubles", "S6: SI1:"),
        ("delete keeps events", "S6: SI2:"),
        ("one too many", "S6: SI5:"),
        ("after is strict", "S6: SI6:"),
        ("user state per session", "S2: the state read"),
    ],
)
def test_each_planted_break_fails_with_what_sees_it(brk: str, opens: str) -> None:
    """The invariants, which do not trust the model, see what is stored twice, out of
    order, partial, lost, from a deleted session, or read wrong as the newest few or from
    a time on; the model comparison sees the state's scopes."""
    with pytest.raises(AssertionError) as failed:
        run_lockstep(Adapter(frozenset({brk})), settings=FIRST_FAILURE)
    prop, _, invariant = opens.partition(" ")
    message = str(failed.value)
    assert message.startswith(prop) and invariant in message, message


def test_a_capability_no_lockstep_knows_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown capabilities"):
        run_lockstep(Adapter(capabilities=frozenset({"branching"})), settings=QUICK)


@given(
    st.lists(
        st.tuples(st.sampled_from(("a", "b")), deltas, st.booleans(), st.booleans()), max_size=12
    ),
    st.integers(0, 14),
    st.floats(0, 12),
)
def test_the_model_holds_to_the_invariants(
    steps: list[tuple[str, tuple[tuple[str, Any], ...], bool, bool]], recent: int, after: float
) -> None:
    """SI1-SI6 on the model's own reads: whole, the newest few (as many as there are
    events or more), and from a time on. (The model once returned only the newest event
    when asked for more than there were; the lockstep on google-adk caught it.)"""
    store, written = Store(), {"a": [], "b": []}  # type: ignore[var-annotated]
    for name in written:
        store = store.create(("app", "u", name), {})
    for i, (name, delta, partial, same) in enumerate(steps):
        event = Event(f"e{i}", "user", f"[e{i}]", float(i // 2 if same else i), delta, partial)
        written[name].append(event)
        store = store.append(("app", "u", name), ModelEvent(*dataclasses.astuple(event)))
    for name, events in written.items():
        for asked, since in ((None, None), (recent, None), (None, after)):
            read = store.read(("app", "u", name), asked, since)
            assert read is not None
            shown = Read(
                tuple(
                    Stored(
                        e.id,
                        e.author,
                        e.text,
                        tuple(sorted(d for d in e.delta if not d[0].startswith("temp:"))),
                    )
                    for e in read.events
                ),
                dict(read.state),
            )
            assert check_read(events, shown, asked, since) == []


def test_the_shared_suite_drives_the_adapter_a_target_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A target that names a ``sessions`` adapter gets the session lockstep from the
    shared suites, with no test of its own."""
    from types import SimpleNamespace

    from ctxaudit import targets
    from ctxaudit.targets import concern_suites

    want = (str(concern_suites.HERE / "test_sessions.py"),)
    assert concern_suites.suites_for({"sessions": "x:y"}) == want
    kind = SimpleNamespace(concerns={"sessions": f"{__name__}:_factory"}, resolve=str)
    monkeypatch.setattr(targets, "get", lambda name: kind)
    config = SimpleNamespace(getoption=lambda name: "toy" if "target" in name else "1.0")
    built = concern_suites.adapter(config, "sessions")  # type: ignore[arg-type]
    assert isinstance(built, Adapter) and built.name == "the file store of 1.0"


def _factory(version: str) -> Adapter:
    return Adapter(name=f"the file store of {version}")
