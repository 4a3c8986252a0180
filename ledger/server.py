"""A Responses-style inference server over a pluggable backend.

The server is handed either a conversation id, or a ``previous_response_id``,
or neither, plus the input items to answer. Its context for inference is the
conversation's items (or the chain of recorded responses), then the input.

It writes by itself (docs/properties.md, section 3): when ``store`` is true and inference ran
to the end, it records the response, and, exactly when it was handed a
conversation, appends the turn (the input items it was sent, then its output
items) to that conversation, in the same transaction.

A failed write fails :meth:`InferenceServer.create`; a streamed response logs
it and completes normally with ``recorded=False`` (S7).
"""

from __future__ import annotations

import itertools
import logging
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ledger.items import INPUT, OUTPUT, JSONObject, Kind, output_from_chunks
from ledger.store import ConversationStore, ResponseRecord, WriteFailedError

log = logging.getLogger(__name__)


class UnknownResponseError(LookupError):
    """``previous_response_id`` names no recorded response."""


@dataclass(frozen=True)
class ServerRequest:
    input: tuple[JSONObject, ...]
    conversation: str | None = None
    previous_response_id: str | None = None
    store: bool = True
    instructions: str = ""

    def __post_init__(self) -> None:
        if self.conversation is not None and self.previous_response_id is not None:
            raise ValueError("a request names a conversation or a previous_response_id, not both")
        if not self.input:
            raise ValueError("a request needs at least one input item")


@dataclass(frozen=True)
class InferenceCall:
    """What the backend is asked to answer."""

    instructions: str
    #: the conversation's items or the response chain, before ``input``
    history: tuple[JSONObject, ...]
    input: tuple[JSONObject, ...]
    conversation: str | None
    previous_response_id: str | None

    @property
    def context(self) -> tuple[JSONObject, ...]:
        return self.history + self.input


class Backend(Protocol):
    """Produces the text of an answer as chunks."""

    def stream(self, call: InferenceCall) -> AsyncIterator[str]: ...


@dataclass(frozen=True)
class ServerResponse:
    id: str
    output: tuple[JSONObject, ...]
    #: whether the response (and, if handed a conversation, the turn) was stored
    recorded: bool


@dataclass(frozen=True)
class Delta:
    text: str


@dataclass(frozen=True)
class Completed:
    response: ServerResponse


ServerEvent = Delta | Completed


@dataclass
class _Counter:
    prefix: str = "resp_"
    _numbers: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def __call__(self) -> str:
        return f"{self.prefix}{next(self._numbers)}"


def counting_ids(prefix: str = "resp_") -> Callable[[], str]:
    """Deterministic response ids ``resp_1``, ``resp_2``, ... (tests)."""
    return _Counter(prefix)


def _uuid_ids() -> str:
    return f"resp_{uuid.uuid4().hex}"


class InferenceServer:
    def __init__(
        self,
        store: ConversationStore,
        backend: Backend,
        *,
        response_ids: Callable[[], str] = _uuid_ids,
    ) -> None:
        self._store = store
        self._backend = backend
        self._response_ids = response_ids

    async def create(self, request: ServerRequest) -> ServerResponse:
        """Run inference to the end and return the response (blocking request)."""
        call = self._call(request)
        chunks = [chunk async for chunk in self._backend.stream(call)]
        return self._complete(request, chunks)

    async def stream(self, request: ServerRequest) -> AsyncIterator[ServerEvent]:
        """Stream the answer as :class:`Delta` events, then one :class:`Completed`.

        Closing or cancelling the stream before :class:`Completed` means
        inference did not run to the end: nothing is stored.
        """
        call = self._call(request)
        chunks: list[str] = []
        async for chunk in self._backend.stream(call):
            chunks.append(chunk)
            yield Delta(chunk)
        try:
            response = self._complete(request, chunks)
        except WriteFailedError:
            log.exception("inference server could not store the streamed response")
            response = ServerResponse(
                self._response_ids(), tuple(output_from_chunks(chunks)), recorded=False
            )
        yield Completed(response)

    def _call(self, request: ServerRequest) -> InferenceCall:
        history: list[JSONObject] = []
        if request.conversation is not None:
            history = [item.content for item in self._store.items(request.conversation)]
        elif request.previous_response_id is not None:
            history = self._chain(request.previous_response_id)
        return InferenceCall(
            request.instructions,
            tuple(history),
            request.input,
            request.conversation,
            request.previous_response_id,
        )

    def _chain(self, response_id: str) -> list[JSONObject]:
        records: list[ResponseRecord] = []
        next_id: str | None = response_id
        while next_id is not None:
            record = self._store.response(next_id)
            if record is None:
                raise UnknownResponseError(next_id)
            records.append(record)
            next_id = record.previous_response_id
        history: list[JSONObject] = []
        for record in reversed(records):
            history.extend(record.input)
            history.extend(record.output)
        return history

    def _complete(self, request: ServerRequest, chunks: Sequence[str]) -> ServerResponse:
        """Inference ran to the end: the server's one write, when it has one."""
        response_id = self._response_ids()
        output = tuple(output_from_chunks(chunks))
        if not request.store:
            return ServerResponse(response_id, output, recorded=False)
        record = ResponseRecord(
            response_id, request.conversation, request.previous_response_id, request.input, output
        )
        if request.conversation is not None:
            items: list[tuple[Kind, JSONObject]] = [(INPUT, item) for item in request.input]
            items.extend((OUTPUT, item) for item in output)
            self._store.append_turn(request.conversation, items, response=record)
        else:
            self._store.save_response(record)
        return ServerResponse(response_id, output, recorded=True)
