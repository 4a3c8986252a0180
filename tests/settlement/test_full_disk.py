"""S7 on a full disk: SQLite's own ``SQLITE_FULL``, not an injected exception.

On a full disk SQLite may roll the transaction back by itself before the store
does. Whatever it did, the write must surface as :class:`WriteFailedError`
carrying the real error, store no part of what it was writing (no half turn, no
compaction marker without its turn, no response record), and leave the store
usable: once there is room again the same write succeeds and reads agree.

The disk is made full with :meth:`FaultInjectingStore.fill_disk` (the database may
not grow by one more page), then a write too large for the free room in the last
page is made: on every write path of the store, and through every request path of
the service, where S7 says blocking paths fail and streams end normally.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest

from ledger import CompactionConfig, FaultInjectingStore, Ledger, Request, WriteFailedError
from ledger.backends import ScriptedBackend
from ledger.items import JSONObject, Kind, assistant_message, user_message
from ledger.server import InferenceServer, counting_ids
from ledger.service import StreamEvent
from ledger.shields import KeywordShield
from ledger.store import ConversationStore, ResponseRecord, StoredItem

pytestmark = pytest.mark.properties("S7")

#: about 50 pages of 4 KiB: never fits in the room left in the database's last page
BIG = "x" * 200_000
SMALL_TURN: list[tuple[Kind, JSONObject]] = [
    ("input", user_message("a")),
    ("output", assistant_message("b")),
]


def is_full_disk(exc: BaseException | None) -> bool:
    """``exc`` is the store's failed write, caused by SQLite's own "database or disk is full"."""
    if not isinstance(exc, WriteFailedError):
        return False
    cause = exc.__cause__
    return isinstance(cause, sqlite3.Error) and cause.sqlite_errorname == "SQLITE_FULL"


def failed_write(call: Callable[[], object]) -> WriteFailedError:
    """Run ``call``; it must fail as a full disk's failed write (and nothing else)."""
    try:
        call()
    except Exception as exc:
        assert is_full_disk(exc), f"a full disk escaped as {type(exc).__name__}: {exc}"
        assert isinstance(exc, WriteFailedError)
        return exc
    pytest.fail("a write that needs new pages succeeded on a full disk")


@pytest.fixture(params=["memory", "file"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FaultInjectingStore]:
    """A private in-memory database, and a WAL-mode file as the ledger runs on."""
    path = ":memory:" if request.param == "memory" else str(tmp_path / "ledger.sqlite")
    with FaultInjectingStore(path) as opened:
        yield opened


def snapshot(store: ConversationStore, conv: str) -> list[tuple[int, int, str, JSONObject]]:
    return [(i.position, i.turn, i.kind, i.content) for i in store.items(conv)]


def assert_whole_turns(items: list[StoredItem]) -> None:
    """Positions are dense from 0; turns are numbered 1, 2, ... in position order."""
    assert [i.position for i in items] == list(range(len(items)))
    turns = [i.turn for i in items]
    assert turns == sorted(turns)
    assert sorted(set(turns)) == list(range(1, len(set(turns)) + 1))


def assert_reopened_agrees(store: ConversationStore, conv: str) -> None:
    """A file database read by a new connection shows what the store shows."""
    if store.path == ":memory:":
        return
    with ConversationStore(store.path) as reopened:
        assert snapshot(reopened, conv) == snapshot(store, conv)


# -- the store's write paths -----------------------------------------------------


@pytest.mark.parametrize("big_at", [0, 1, 2], ids=["first", "middle", "last"])
def test_turn_on_a_full_disk_fails_whole_and_the_store_works_after(
    store: FaultInjectingStore, big_at: int
) -> None:
    conv = store.create_conversation("c")
    store.append_turn(conv, SMALL_TURN)
    before = snapshot(store, conv)
    turn: list[tuple[Kind, JSONObject]] = [
        ("summary", {"type": "summary", "content": "s", "first_turn": 1, "last_turn": 1}),
        ("input", user_message("q")),
        ("output", assistant_message("r")),
    ]
    turn[big_at] = (turn[big_at][0], {**turn[big_at][1], "content": BIG})
    record = ResponseRecord("resp_1", conv, None, (user_message("q"),), ())
    store.fill_disk()
    for _ in range(3):  # failing again and again never wedges the store
        failed_write(lambda: store.append_turn(conv, turn, response=record))
        assert snapshot(store, conv) == before
        assert store.response("resp_1") is None
    assert_reopened_agrees(store, conv)

    store.free_disk()
    assert store.append_turn(conv, turn, response=record) == 2
    items = store.items(conv)
    assert_whole_turns(items)
    assert [(i.turn, i.kind) for i in items[len(before) :]] == [
        (2, "summary"),
        (2, "input"),
        (2, "output"),
    ]
    assert items[len(before) + big_at].content["content"] == BIG
    assert store.response("resp_1") == record
    assert_reopened_agrees(store, conv)


def test_lone_response_on_a_full_disk_is_not_recorded(store: FaultInjectingStore) -> None:
    record = ResponseRecord("resp_1", None, None, (user_message(BIG),), ())
    store.fill_disk()
    failed_write(lambda: store.save_response(record))
    assert store.response("resp_1") is None
    store.free_disk()
    store.save_response(record)
    assert store.response("resp_1") == record


def test_new_conversation_on_a_full_disk_is_not_created(store: FaultInjectingStore) -> None:
    big_id = "c" * 200_000
    store.fill_disk()
    failed_write(lambda: store.create_conversation(big_id))
    assert not store.has_conversation(big_id)
    assert store.conversation_ids() == []
    store.free_disk()
    assert store.create_conversation(big_id) == big_id
    store.append_turn(big_id, SMALL_TURN)
    assert [i.kind for i in store.items(big_id)] == ["input", "output"]


# -- through the service (S7's observable contract) --------------------------------


class Service:
    """A ledger over ``store`` whose issued response ids are remembered."""

    def __init__(self, store: FaultInjectingStore, *, window: int) -> None:
        self.store = store
        self.response_ids: list[str] = []
        next_id = counting_ids()

        def response_ids() -> str:
            self.response_ids.append(next_id())
            return self.response_ids[-1]

        server = InferenceServer(
            store, ScriptedBackend(lambda call: ["an", "swer"]), response_ids=response_ids
        )
        config = CompactionConfig(context_window=window, threshold_ratio=0.5, buffer_turns=1)
        self.ledger = Ledger(store, server, config, shield=KeywordShield("forbidden"))
        self.conv = self.ledger.create_conversation("c")

    def run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run(coro)

    def shapes(self) -> list[list[str]]:
        grouped: dict[int, list[str]] = {}
        for item in self.store.items(self.conv):
            grouped.setdefault(item.turn, []).append(item.kind)
        return list(grouped.values())

    def recorded(self, ids: list[str]) -> list[str]:
        return [i for i in ids if self.store.response(i) is not None]


async def types(stream: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    return [event async for event in stream]


LARGE_WINDOW, SMALL_WINDOW = 10_000_000, 60

#: request path -> (context window, the request, the shape of the turn it stores)
BLOCKING: dict[str, tuple[int, str, list[str]]] = {
    "query": (LARGE_WINDOW, "query", ["input", "output"]),
    "responses": (LARGE_WINDOW, "responses", ["input", "output"]),
    "responses blocked": (LARGE_WINDOW, "responses", ["input", "output"]),
    "query compacted": (SMALL_WINDOW, "query", ["summary", "input", "output"]),
    "responses compacted": (SMALL_WINDOW, "responses", ["summary", "input", "output"]),
    "query continuation": (LARGE_WINDOW, "query", ["input", "output"]),
}


def request_for(path: str, service: Service) -> Request:
    text = ("forbidden " if "blocked" in path else "") + BIG
    previous = None
    if "continuation" in path:
        previous = service.response_ids[-1]
    return Request(text, service.conv, previous_response_id=previous)


def prepare(service: Service) -> None:
    """Two small turns first: a compacted request then folds the first into a marker."""
    for n in range(2):
        service.run(service.ledger.query(Request(f"q{n}", service.conv)))
    assert service.shapes() == [["input", "output"], ["input", "output"]]


@pytest.mark.parametrize("path", sorted(BLOCKING))
def test_blocking_path_fails_on_a_full_disk_and_stores_nothing(
    store: FaultInjectingStore, path: str
) -> None:
    window, method, shape = BLOCKING[path]
    service = Service(store, window=window)
    prepare(service)
    before = snapshot(store, service.conv)
    request = request_for(path, service)
    call = getattr(service.ledger, method)
    issued = len(service.response_ids)
    store.fill_disk()
    failed_write(lambda: service.run(call(request)))
    assert snapshot(store, service.conv) == before
    assert service.recorded(service.response_ids[issued:]) == []

    store.free_disk()
    reply = service.run(call(request))
    assert reply.compacted == ("compacted" in path)
    assert reply.blocked == ("blocked" in path)
    assert service.shapes() == [["input", "output"], ["input", "output"], shape]
    assert_whole_turns(store.items(service.conv))
    assert_reopened_agrees(store, service.conv)


STREAMING: dict[str, tuple[int, str, list[str]]] = {
    "streaming_query": (LARGE_WINDOW, "streaming_query", ["input", "output"]),
    "responses_stream": (LARGE_WINDOW, "responses_stream", ["input", "output"]),
    "responses_stream blocked": (LARGE_WINDOW, "responses_stream", ["input", "output"]),
    "streaming_query compacted": (SMALL_WINDOW, "streaming_query", ["summary", "input", "output"]),
}


@pytest.mark.parametrize("path", sorted(STREAMING))
def test_stream_ends_normally_on_a_full_disk_and_stores_nothing(
    store: FaultInjectingStore, path: str, caplog: pytest.LogCaptureFixture
) -> None:
    window, method, shape = STREAMING[path]
    service = Service(store, window=window)
    prepare(service)
    before = snapshot(store, service.conv)
    request = request_for(path, service)
    call = getattr(service.ledger, method)
    issued = len(service.response_ids)
    store.fill_disk()
    with caplog.at_level(logging.ERROR):
        events = service.run(types(call(request)))
    ending = ["refusal", "done"] if "blocked" in path else ["delta", "delta", "done"]
    assert [e.type for e in events] == ["created", *ending]
    assert events[-1].response_id is None  # nothing was recorded to continue from
    assert snapshot(store, service.conv) == before
    assert service.recorded(service.response_ids[issued:]) == []
    logged = [r.exc_info[1] for r in caplog.records if r.exc_info is not None]
    assert logged and all(is_full_disk(exc) for exc in logged), "the real error is logged"

    store.free_disk()
    events = service.run(types(call(request)))
    assert events[-1].type == "done"
    assert (events[-1].response_id is not None) == ("blocked" not in path)
    assert service.shapes() == [["input", "output"], ["input", "output"], shape]
    assert_reopened_agrees(store, service.conv)


@pytest.mark.parametrize("how", ["interrupt", "client gone"])
def test_stopped_stream_ends_normally_on_a_full_disk_and_stores_nothing(
    store: FaultInjectingStore, how: str, caplog: pytest.LogCaptureFixture
) -> None:
    service = Service(store, window=LARGE_WINDOW)
    prepare(service)
    before = snapshot(store, service.conv)

    async def stopped() -> list[str]:
        stream = service.ledger.streaming_query(Request(BIG, service.conv))
        created = await anext(stream)
        seen = [created.type, (await anext(stream)).type]
        if how == "client gone":
            await stream.aclose()  # type: ignore[attr-defined]
            return seen
        assert service.ledger.interrupt(created.request_id) is True
        return seen + [event.type async for event in stream]

    store.fill_disk()
    expected = ["created", "delta"] + (["interrupted"] if how == "interrupt" else [])
    with caplog.at_level(logging.ERROR):
        assert service.run(stopped()) == expected
    assert snapshot(store, service.conv) == before
    logged = [r.exc_info[1] for r in caplog.records if r.exc_info is not None]
    assert logged and all(is_full_disk(exc) for exc in logged), "the real error is logged"
    assert service.ledger.active_streams() == []

    store.free_disk()
    assert service.run(stopped()) == expected
    assert service.shapes() == [["input", "output"], ["input", "output"], ["input", "output"]]
    assert store.items(service.conv)[-1].content["status"] == "incomplete"
    assert_reopened_agrees(store, service.conv)
