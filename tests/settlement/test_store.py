"""The conversation store: order, kinds, one transaction per turn, failure injection."""

from __future__ import annotations

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
