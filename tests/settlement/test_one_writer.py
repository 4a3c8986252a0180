"""S8: only the owner and the server write conversation items."""

from __future__ import annotations

from pathlib import Path

import pytest
from writer_scan import offenders, scan_package, scan_source

import ledger

pytestmark = pytest.mark.properties("S8")

ROOT = Path(ledger.__file__).resolve().parent.parent


def test_s8_only_owner_and_server_write_conversation_items() -> None:
    found = scan_package(ROOT)
    assert offenders(found) == []


def test_owner_and_server_each_write_in_exactly_one_function() -> None:
    found = scan_package(ROOT)
    owner = [(ref.function, ref.what) for ref in found if ref.module == "ledger/owner.py"]
    server = [(ref.function, ref.what) for ref in found if ref.module == "ledger/server.py"]
    assert owner == [("PendingTurn._write", ".append_turn")]
    assert server == [("InferenceServer._complete", ".append_turn")]


OFFENDING = """
from ledger.store import ConversationStore

def tidy(store: ConversationStore, conv: str, items: list) -> None:
    store.append_turn(conv, items)

def sneaky(store, conv, items):
    write = getattr(store, "append_turn")
    write(conv, items)

def raw(conn):
    conn.execute("insert into items (conversation_id) values (?)", ("c",))

def harmless(store, conv):
    return store.items(conv), "items are read here"
"""


def test_scanner_reports_a_module_that_writes() -> None:
    found = scan_source(OFFENDING, "ledger/endpoints_cleanup.py")
    assert [(ref.function, ref.what) for ref in found] == [
        ("tidy", ".append_turn"),
        ("sneaky", "'append_turn'"),
        ("raw", "SQL writing items"),
    ]
    assert offenders(found) == found


def test_scanner_allows_the_same_source_in_the_owner() -> None:
    assert offenders(scan_source(OFFENDING, "ledger/owner.py")) == []
