"""Conversation store over SQLite (standard library ``sqlite3``).

Tables:

- ``conversations(id)``;
- ``items(conversation_id, position, turn, kind, content)``: ``position`` is
  0-based and dense within a conversation, ``turn`` is the 1-based number of
  the turn (one :meth:`ConversationStore.append_turn` call) the item belongs
  to, ``kind`` is ``input`` / ``output`` / ``summary`` and ``content`` the
  item's canonical JSON;
- ``responses(id, conversation_id, previous_response_id, input, output)``:
  what the inference server recorded for ``previous_response_id``
  continuation.

A turn is written in one transaction (``BEGIN IMMEDIATE`` ... ``COMMIT``): all
of its items and its response record, or none of them. Any failure inside the
transaction rolls it back and surfaces as :class:`WriteFailedError`, whose
``__cause__`` is SQLite's error (``SQLITE_FULL`` on a full disk), also when SQLite
had already rolled the transaction back by itself.

Writers: :meth:`ConversationStore.append_turn` is the only method that writes
conversation items (:data:`CONVERSATION_WRITERS`; S8 scans for it).

Failure injection for tests is a subclass, :class:`FaultInjectingStore`, whose
:meth:`~FaultInjectingStore.fail_next_write` makes the next turn write fail in
the middle of its transaction, after some items were inserted, and whose
:meth:`~FaultInjectingStore.fill_disk` makes every write that needs a new page
fail as on a full disk.
"""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from ledger.items import KINDS, JSONObject, Kind, canonical_json

#: Names of the store methods that write conversation items (S8).
CONVERSATION_WRITERS: frozenset[str] = frozenset({"append_turn"})

_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id TEXT PRIMARY KEY
);
CREATE TABLE IF NOT EXISTS items (
    conversation_id TEXT NOT NULL REFERENCES conversations(id),
    position INTEGER NOT NULL CHECK (position >= 0),
    turn INTEGER NOT NULL CHECK (turn >= 1),
    kind TEXT NOT NULL CHECK (kind IN ('input', 'output', 'summary')),
    content TEXT NOT NULL,
    PRIMARY KEY (conversation_id, position)
);
CREATE TABLE IF NOT EXISTS responses (
    id TEXT PRIMARY KEY,
    conversation_id TEXT,
    previous_response_id TEXT,
    input TEXT NOT NULL,
    output TEXT NOT NULL
);
"""


class StoreError(Exception):
    """Base class of the store's own errors."""


class WriteFailedError(StoreError):
    """A write did not happen; its transaction was rolled back as a whole."""


class UnknownConversationError(StoreError, LookupError):
    """The conversation id names no conversation."""


@dataclass(frozen=True)
class StoredItem:
    conversation_id: str
    position: int
    turn: int
    kind: Kind
    content: JSONObject


@dataclass(frozen=True)
class ResponseRecord:
    """A response the inference server recorded (``store`` was true)."""

    id: str
    conversation_id: str | None
    previous_response_id: str | None
    input: tuple[JSONObject, ...]
    output: tuple[JSONObject, ...]


class ConversationStore:
    """Conversations, their items and recorded responses in one SQLite database.

    ``path`` is a file name, or ``":memory:"`` (the default) for a private
    in-memory database. The store is meant for one thread (an asyncio loop);
    open one store per process on a shared file.
    """

    def __init__(self, path: str | os.PathLike[str] = ":memory:") -> None:
        self.path = os.fspath(path)
        # isolation_level=None: no implicit transactions; every write below
        # opens its own explicit one.
        self._conn = sqlite3.connect(self.path, isolation_level=None)
        self._conn.execute("PRAGMA foreign_keys = ON")
        if self.path != ":memory:":
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = FULL")
        self._conn.executescript(_SCHEMA)

    # -- lifecycle ---------------------------------------------------------

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> ConversationStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading -----------------------------------------------------------

    def has_conversation(self, conversation_id: str) -> bool:
        row = self._conn.execute(
            "SELECT 1 FROM conversations WHERE id = ?", (conversation_id,)
        ).fetchone()
        return row is not None

    def conversation_ids(self) -> list[str]:
        return [row[0] for row in self._conn.execute("SELECT id FROM conversations ORDER BY id")]

    def items(self, conversation_id: str) -> list[StoredItem]:
        """The conversation's items in order. Unknown ids raise."""
        if not self.has_conversation(conversation_id):
            raise UnknownConversationError(conversation_id)
        rows = self._conn.execute(
            "SELECT position, turn, kind, content FROM items"
            " WHERE conversation_id = ? ORDER BY position",
            (conversation_id,),
        )
        return [
            StoredItem(conversation_id, position, turn, kind, json.loads(content))
            for position, turn, kind, content in rows
        ]

    def response(self, response_id: str) -> ResponseRecord | None:
        row = self._conn.execute(
            "SELECT id, conversation_id, previous_response_id, input, output"
            " FROM responses WHERE id = ?",
            (response_id,),
        ).fetchone()
        if row is None:
            return None
        return ResponseRecord(
            row[0], row[1], row[2], tuple(json.loads(row[3])), tuple(json.loads(row[4]))
        )

    # -- writing -----------------------------------------------------------

    def create_conversation(self, conversation_id: str | None = None) -> str:
        """Create an empty conversation and return its id (a new uuid if none given)."""
        new_id = conversation_id if conversation_id is not None else f"conv_{uuid.uuid4().hex}"
        try:
            with self._transaction():
                self._conn.execute("INSERT INTO conversations (id) VALUES (?)", (new_id,))
        except WriteFailedError as exc:
            if isinstance(exc.__cause__, sqlite3.IntegrityError):
                raise ValueError(f"conversation {new_id!r} already exists") from None
            raise
        return new_id

    def append_turn(
        self,
        conversation_id: str,
        items: Sequence[tuple[Kind, JSONObject]],
        *,
        response: ResponseRecord | None = None,
    ) -> int:
        """Append one turn (``(kind, content)`` pairs, in order) in one transaction.

        Also records ``response`` in the same transaction when given. Returns
        the new turn's number. On any failure nothing of the turn is stored and
        :class:`WriteFailedError` is raised; an unknown conversation raises
        :class:`UnknownConversationError` and invalid items ``ValueError``,
        both before anything is written.
        """
        if not items:
            raise ValueError("a turn has at least one item")
        encoded: list[tuple[str, str]] = []
        for index, (kind, content) in enumerate(items):
            if kind not in KINDS:
                raise ValueError(f"item {index}: unknown kind {kind!r}")
            if not isinstance(content, dict):
                raise ValueError(f"item {index}: content must be a JSON object")
            encoded.append((kind, canonical_json(content)))
        if not self.has_conversation(conversation_id):
            raise UnknownConversationError(conversation_id)
        with self._transaction():
            turn, position = self._conn.execute(
                "SELECT COALESCE(MAX(turn), 0) + 1, COALESCE(MAX(position), -1) + 1"
                " FROM items WHERE conversation_id = ?",
                (conversation_id,),
            ).fetchone()
            for index, (item_kind, encoded_content) in enumerate(encoded):
                self._before_item(index)
                self._conn.execute(
                    "INSERT INTO items (conversation_id, position, turn, kind, content)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (conversation_id, position + index, turn, item_kind, encoded_content),
                )
            if response is not None:
                self._insert_response(response)
            self._before_commit()
        return int(turn)

    def save_response(self, response: ResponseRecord) -> None:
        """Record a response that belongs to no stored turn (one transaction)."""
        with self._transaction():
            self._insert_response(response)

    def _insert_response(self, response: ResponseRecord) -> None:
        self._conn.execute(
            "INSERT INTO responses (id, conversation_id, previous_response_id, input, output)"
            " VALUES (?, ?, ?, ?, ?)",
            (
                response.id,
                response.conversation_id,
                response.previous_response_id,
                canonical_json(list(response.input)),
                canonical_json(list(response.output)),
            ),
        )

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise WriteFailedError(f"cannot begin a transaction: {exc}") from exc
        try:
            yield
        except BaseException as exc:
            self._rollback(exc)
            if isinstance(exc, sqlite3.Error):
                raise WriteFailedError(f"write rolled back: {exc}") from exc
            raise
        try:
            self._conn.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback(exc)
            raise WriteFailedError(f"commit failed: {exc}") from exc

    def _rollback(self, error: BaseException) -> None:
        """Roll back the open transaction after ``error``, unless SQLite already has.

        On some errors (a full disk, an I/O error, no memory) SQLite may roll the
        whole transaction back by itself; a second ROLLBACK would then raise "no
        transaction is active" and hide ``error``, the one the caller must see. A
        ROLLBACK that fails by itself is noted on ``error``, which is still raised.
        """
        if not self._conn.in_transaction:
            return
        try:
            self._conn.execute("ROLLBACK")
        except sqlite3.Error as rollback_error:
            error.add_note(f"and the rollback failed too: {rollback_error}")

    # -- seams for failure injection (no-ops here) --------------------------

    def _before_item(self, index: int) -> None:
        """Called inside a turn's transaction before its item ``index`` is inserted."""

    def _before_commit(self) -> None:
        """Called inside a turn's transaction just before it commits."""


class FaultInjectingStore(ConversationStore):
    """A store whose next turn write can be made to fail (tests, S7).

    :meth:`fail_next_write` arms one fault. The next :meth:`append_turn`
    inserts ``after_items`` items (or all of them, if the turn is shorter),
    then fails inside its transaction, which is rolled back:
    :class:`WriteFailedError` is raised and no part of the turn remains. Other
    writes (conversations, lone response records) are not affected.

    :meth:`fill_disk` makes the disk full for every write until
    :meth:`free_disk`: the database may not grow by one more page, so any write
    that needs a new page fails inside SQLite with ``SQLITE_FULL`` ("database or
    disk is full"), as on a full disk, and SQLite may roll the transaction back
    by itself before the store does.
    """

    def __init__(self, path: str | os.PathLike[str] = ":memory:") -> None:
        super().__init__(path)
        self._fail_after: int | None = None
        self.faults_fired = 0
        self._page_limit: int | None = None

    def fill_disk(self) -> int:
        """No write may add a page to the database from now on; returns the pages it has.

        A write that fits in the room left in the database's pages still
        succeeds. The limit (``PRAGMA max_page_count``) holds for this store's
        connection only.
        """
        pages = int(self._conn.execute("PRAGMA page_count").fetchone()[0])
        if self._page_limit is None:
            self._page_limit = int(self._conn.execute("PRAGMA max_page_count").fetchone()[0])
        self._conn.execute(f"PRAGMA max_page_count = {pages}")
        return pages

    def free_disk(self) -> None:
        """Undo :meth:`fill_disk`: the database may grow again."""
        if self._page_limit is not None:
            self._conn.execute(f"PRAGMA max_page_count = {self._page_limit}")
            self._page_limit = None

    def fail_next_write(self, after_items: int = 1) -> None:
        if after_items < 0:
            raise ValueError("after_items must be >= 0")
        self._fail_after = after_items

    @property
    def fault_pending(self) -> bool:
        return self._fail_after is not None

    def disarm(self) -> None:
        self._fail_after = None

    def _fire(self) -> None:
        self._fail_after = None
        self.faults_fired += 1
        raise sqlite3.OperationalError("injected write failure")

    def _before_item(self, index: int) -> None:
        if self._fail_after is not None and index >= self._fail_after:
            self._fire()

    def _before_commit(self) -> None:
        if self._fail_after is not None:
            self._fire()
