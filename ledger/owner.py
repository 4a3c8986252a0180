"""The settlement owner: one per request, the one writer of a turn the server does not store.

S1-S5 of docs/properties.md (LCORE-3908 gave this write one owner after LCORE-3883
lost it in endpoint clean-ups):

- S1: the owner stores the turn exactly when ``store`` is true and the server
  does not. The server stores a turn exactly when it was handed the
  conversation, ``store`` is true and inference ran to the end; so for the
  owner that is: the request was compacted, continues a
  ``previous_response_id``, was blocked by a shield, or was interrupted.
- S2: what it stores is the original input (never the compacted explicit
  input), then the output of the report that settled the turn.
- S3: the first report settles the turn; later reports do nothing.
- S4: a compacted request's owner must be handed the original input.
- S5: :meth:`PendingTurn.finish` at the end of a handler raises
  :class:`TurnNotStoredError` when a compacted turn was never settled.

:meth:`PendingTurn._write` is the only place in this module that writes.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from ledger.items import INCOMPLETE, INPUT, OUTPUT, SUMMARY, JSONObject, Kind, output_from_chunks
from ledger.items import refusal_message as _refusal_message
from ledger.store import ConversationStore


class TurnNotStoredError(Exception):
    """A compacted turn reached the end of its handler unsettled (S5).

    Deliberately not a ``RuntimeError``: endpoints report ``RuntimeError`` as an
    inference failure, and this is a defect of the ledger, not of inference.
    """


class Outcome(enum.Enum):
    COMPLETED = "completed"
    BLOCKED = "blocked"
    INTERRUPTED = "interrupted"


class PendingTurn:
    """Owns the settlement of one request's turn.

    ``sent_input`` is the input the inference server is sent: for a compacted
    request that is the explicit input, and ``original_input`` (the new input
    as the user sent it) must be handed over as well (S4). ``summary`` is the
    compaction marker to store ahead of the turn's items.
    ``server_has_conversation`` says whether the server was handed the
    conversation (so stores a turn that runs to the end by itself).
    """

    def __init__(
        self,
        store: ConversationStore,
        conversation_id: str,
        sent_input: Sequence[JSONObject],
        *,
        store_turn: bool,
        server_has_conversation: bool,
        compacted: bool = False,
        original_input: Sequence[JSONObject] | None = None,
        summary: JSONObject | None = None,
    ) -> None:
        if compacted and original_input is None:
            raise ValueError(
                "a compacted request's owner needs the original input (S4): "
                "the explicit input must never be stored as the user's turn"
            )
        if compacted and server_has_conversation:
            raise ValueError("a compacted request is never served from the conversation")
        self._store = store
        self.conversation_id = conversation_id
        self.compacted = compacted
        self.store_turn = store_turn
        self.server_has_conversation = server_has_conversation
        turn_input = original_input if compacted and original_input is not None else sent_input
        self._input: tuple[JSONObject, ...] = tuple(turn_input)
        self._summary = summary
        self._settled = False
        self.outcome: Outcome | None = None
        self.written = False

    @property
    def settled(self) -> bool:
        return self._settled

    def owner_writes(self, outcome: Outcome) -> bool:
        """S1: does the owner store the turn when it ends with ``outcome``?"""
        server_stores = self.server_has_conversation and outcome is Outcome.COMPLETED
        return self.store_turn and not server_stores

    # -- reports: the first one settles the turn (S3) ------------------------

    def report_completed(self, output: Sequence[JSONObject]) -> bool:
        """Inference ran to the end with ``output``. True when this report settled the turn."""
        return self._settle(Outcome.COMPLETED, output)

    def report_blocked(self, refusal: str) -> bool:
        """A shield refused the request with ``refusal``."""
        return self._settle(Outcome.BLOCKED, [_refusal_message(refusal)])

    def report_interrupted(self, streamed: Sequence[str]) -> bool:
        """The stream stopped early; ``streamed`` is the text the client received."""
        return self._settle(Outcome.INTERRUPTED, output_from_chunks(streamed, status=INCOMPLETE))

    def _settle(self, outcome: Outcome, output: Sequence[JSONObject]) -> bool:
        if self._settled:
            return False
        self._settled = True
        self.outcome = outcome
        if self.owner_writes(outcome):
            self._write(output)
        return True

    def _write(self, output: Sequence[JSONObject]) -> None:
        """The owner's one write: marker, original input, output, in one transaction.

        Raises :class:`~ledger.store.WriteFailedError` when the store fails; the
        turn stays settled (no later report retries it) and nothing is stored.
        """
        items: list[tuple[Kind, JSONObject]] = []
        if self._summary is not None and not self._folded_since():
            items.append((SUMMARY, self._summary))
        items.extend((INPUT, item) for item in self._input)
        items.extend((OUTPUT, item) for item in output)
        self._store.append_turn(self.conversation_id, items)
        self.written = True

    def _folded_since(self) -> bool:
        """Whether a marker stored since this request was planned (by another compacted
        request of the conversation that was in flight with it and ended first) already
        folds one of the turns this one's marker folds: storing it too would fold those
        turns twice (T5). The read and the write that follows run in one step of the
        event loop, so no other write comes between them."""
        assert self._summary is not None
        covered = max(
            (int(i.content["last_turn"]) for i in self._store.items(self.conversation_id)
             if i.kind == SUMMARY),
            default=0,
        )  # fmt: skip
        return covered >= int(self._summary["first_turn"])

    # -- end of the handler (S5) -------------------------------------------

    def finish(self) -> None:
        """Called where a request's handler ends normally."""
        if self.compacted and not self._settled:
            raise TurnNotStoredError(
                f"compacted turn in conversation {self.conversation_id!r} reached the end "
                "of its handler without being settled; it would be lost"
            )
