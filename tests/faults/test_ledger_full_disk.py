"""A full disk injected at the ledger's store: the write fails as S7 says, nothing is
lost and nothing is wrongly kept.

The fault is SQLite's own ``SQLITE_FULL`` on a WAL-mode file database (as the ledger
runs): :meth:`FaultInjectingStore.fill_disk` forbids the database another page and
the write is too large for the room left. What was stored is read back through a
connection of the harness's own, not through the store. A fault that cannot be
injected, or a write that succeeds all the same, means ctxaudit could not check
(:class:`CouldNotCheck`), never that the ledger holds.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from ctxaudit.outcomes import CouldNotCheck, observing
from ledger import CompactionConfig, FaultInjectingStore, Ledger, Request, WriteFailedError
from ledger.backends import ScriptedBackend
from ledger.items import assistant_message, user_message
from ledger.server import InferenceServer, counting_ids
from ledger.store import ResponseRecord

#: far more than the room left in the database's last page (4 KiB pages)
BIG = "x" * 200_000

Rows = tuple[list[tuple[str, int, int, str, str]], list[str]]


def stored_rows(path: Path) -> Rows:
    """Every item row and every response id in the file, read by a connection of our own."""
    with observing(f"the rows stored in {path.name}"):
        conn = sqlite3.connect(path)
        try:
            items = conn.execute(
                "SELECT conversation_id, position, turn, kind, content FROM items"
                " ORDER BY conversation_id, position"
            ).fetchall()
            responses = [row[0] for row in conn.execute("SELECT id FROM responses ORDER BY id")]
        finally:
            conn.close()
    return items, responses


def fill_disk(store: FaultInjectingStore) -> None:
    try:
        store.fill_disk()
    except Exception as exc:
        raise CouldNotCheck(f"could not inject a full disk: {type(exc).__name__}: {exc}") from exc


def write_on_full_disk(write: Callable[[], object]) -> BaseException:
    """What ``write`` raised on the full disk; a write that succeeded means no fault fired."""
    try:
        write()
    except Exception as exc:
        return exc
    raise CouldNotCheck("the injected full disk did not fail a write that needs new pages")


def assert_failed_write(error: BaseException) -> None:
    """S7's contract for the store: a failed write, carrying SQLite's own error."""
    assert isinstance(error, WriteFailedError), (
        f"a full disk escaped the failed-write contract as {type(error).__name__}: {error}"
    )
    cause = error.__cause__
    assert isinstance(cause, sqlite3.Error) and cause.sqlite_errorname == "SQLITE_FULL", (
        f"the failed write hides the full disk: its cause is {cause!r}"
    )


@pytest.mark.fault("full disk")
def test_full_disk_fails_the_turn_and_keeps_every_whole_turn(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    with FaultInjectingStore(path) as store:
        conv = store.create_conversation("c")
        for n in range(3):
            store.append_turn(
                conv, [("input", user_message(f"q{n}")), ("output", assistant_message("a"))]
            )
        before = stored_rows(path)
        record = ResponseRecord("resp_big", conv, None, (user_message(BIG),), ())
        turn = [("input", user_message("q")), ("output", assistant_message(BIG))]

        fill_disk(store)
        error = write_on_full_disk(lambda: store.append_turn(conv, turn, response=record))
        assert_failed_write(error)
        assert stored_rows(path) == before, "the failed turn lost or kept something"

        store.free_disk()
        assert store.append_turn(conv, turn, response=record) == 4, "the store is stuck"
    items, responses = stored_rows(path)
    assert items[: len(before[0])] == before[0]
    assert [(row[1], row[2], row[3]) for row in items[len(before[0]) :]] == [
        (6, 4, "input"),
        (7, 4, "output"),
    ]
    assert responses == ["resp_big"]


@pytest.mark.fault("full disk")
def test_full_disk_fails_a_compacted_query_without_keeping_its_marker(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    with FaultInjectingStore(path) as store:
        server = InferenceServer(
            store, ScriptedBackend(lambda call: ["a"]), response_ids=counting_ids()
        )
        config = CompactionConfig(context_window=60, threshold_ratio=0.5, buffer_turns=1)
        ledger = Ledger(store, server, config)
        conv = ledger.create_conversation("c")
        for n in range(2):
            asyncio.run(ledger.query(Request(f"q{n}", conv)))
        before = stored_rows(path)
        request = Request(BIG, conv)  # compacted: the turn 1 is folded into a marker

        fill_disk(store)
        error = write_on_full_disk(lambda: asyncio.run(ledger.query(request)))
        assert_failed_write(error)
        assert stored_rows(path) == before, "the failed query lost or kept something"

        store.free_disk()
        reply = asyncio.run(ledger.query(request))
    assert reply.compacted
    items, _ = stored_rows(path)
    assert items[: len(before[0])] == before[0]
    assert [row[3] for row in items[len(before[0]) :]] == ["summary", "input", "output"]
