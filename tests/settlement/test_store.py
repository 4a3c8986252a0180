"""The conversation store: order, kinds, one transaction per turn, failure injection."""

from __future__ import annotations

import sqlite3

import pytest

from ledger.items import JSONObject, Kind, assistant_message, user_message
from ledger.store import (
    ConversationStore,
    FaultInjectingStore,
    ResponseRecord,
    UnknownConversationError,
    WriteFailedError,
)

pytestmark = pytest.mark.properties("S7")

TURN: list[tuple[Kind, JSONObject]] = [
    ("input", user_message("a")),
    ("input", user_message("b")),
    ("output", assistant_message("c")),
]


def test_turns_are_numbered_and_items_ordered() -> None:
    store = ConversationStore()
    conv = store.create_conversation()
    assert store.append_turn(conv, TURN) == 1
    assert store.append_turn(conv, TURN[:1]) == 2
    items = store.items(conv)
    assert [(i.position, i.turn, i.kind) for i in items] == [
        (0, 1, "input"),
        (1, 1, "input"),
        (2, 1, "output"),
        (3, 2, "input"),
    ]
    assert items[2].content == assistant_message("c")


@pytest.mark.parametrize("after_items", [0, 1, 2, 3, 10])
def test_failed_write_leaves_no_part_of_the_turn(after_items: int) -> None:
    store = FaultInjectingStore()
    conv = store.create_conversation("c")
    store.append_turn(conv, TURN)
    store.fail_next_write(after_items=after_items)
    response = ResponseRecord("r1", conv, None, (user_message("a"),), ())
    with pytest.raises(WriteFailedError):
        store.append_turn(conv, TURN, response=response)
    assert not store.fault_pending
    assert len(store.items(conv)) == 3
    assert store.response("r1") is None
    assert store.append_turn(conv, TURN) == 2  # the store still works


def test_unknown_conversation_and_bad_items_are_refused_before_writing() -> None:
    store = ConversationStore()
    with pytest.raises(UnknownConversationError):
        store.append_turn("nope", TURN)
    with pytest.raises(UnknownConversationError):
        store.items("nope")
    conv = store.create_conversation()
    with pytest.raises(ValueError, match="kind"):
        store.append_turn(conv, [("thought", {"x": 1})])  # type: ignore[list-item]
    with pytest.raises(ValueError):
        store.append_turn(conv, [])
    with pytest.raises(ValueError, match="already exists"):
        store.create_conversation(conv)
    assert store.items(conv) == []


def test_file_database_survives_reopening(tmp_path: object) -> None:
    path = f"{tmp_path}/ledger.db"
    with ConversationStore(path) as store:
        conv = store.create_conversation("c")
        store.append_turn(conv, TURN)
        store.save_response(ResponseRecord("r1", None, None, (user_message("a"),), ()))
    with ConversationStore(path) as store:
        assert [i.content for i in store.items("c")] == [content for _, content in TURN]
        record = store.response("r1")
        assert record is not None and record.input == (user_message("a"),)


def test_closed_store_refuses_use(tmp_path: object) -> None:
    store = ConversationStore()
    store.create_conversation("c")
    store.close()
    with pytest.raises(sqlite3.ProgrammingError):
        store.items("c")
    with ConversationStore(f"{tmp_path}/closed.db") as managed:
        managed.create_conversation("c")
    with pytest.raises(sqlite3.ProgrammingError):  # leaving the block closed it
        managed.items("c")


def test_file_database_is_in_wal_mode(tmp_path: object) -> None:
    """The journal mode is stored in the file: another connection reads it back."""
    path = f"{tmp_path}/wal.db"
    with ConversationStore(path) as store:
        store.append_turn(store.create_conversation("c"), TURN)
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    finally:
        conn.close()


class _Probe(FaultInjectingStore):
    """Counts the items of "c" visible inside the transaction when the fault fires."""

    seen_at_fault: int | None = None

    def _fire(self) -> None:
        self.seen_at_fault = len(self.items("c"))  # same connection: uncommitted rows count
        super()._fire()


@pytest.mark.parametrize(("after_items", "inserted"), [(0, 0), (1, 1), (2, 2), (3, 3), (10, 3)])
def test_fault_fires_after_the_asked_number_of_items(after_items: int, inserted: int) -> None:
    """The injected failure really lands mid-turn (S7 tests rely on it), then rolls back."""
    store = _Probe()
    conv = store.create_conversation("c")
    store.append_turn(conv, TURN)
    store.fail_next_write(after_items=after_items)
    with pytest.raises(WriteFailedError):
        store.append_turn(conv, TURN)
    assert store.seen_at_fault == len(TURN) + inserted
    assert store.faults_fired == 1
    assert len(store.items(conv)) == len(TURN)
    store.fail_next_write(after_items=0)
    with pytest.raises(WriteFailedError):
        store.append_turn(conv, TURN)
    assert store.faults_fired == 2


def test_disarmed_fault_does_not_fire() -> None:
    store = FaultInjectingStore()
    conv = store.create_conversation("c")
    store.fail_next_write(after_items=0)
    assert store.fault_pending
    store.disarm()
    assert not store.fault_pending
    assert store.append_turn(conv, TURN) == 1
    assert store.faults_fired == 0
    with pytest.raises(ValueError):
        store.fail_next_write(after_items=-1)
