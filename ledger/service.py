"""The request paths: ``query``, ``streaming_query``, ``responses`` (blocking and streaming).

Every request is prepared the same way (:meth:`Ledger._prepare`): its input is
normalised, the compaction plan decides between serving it from the
conversation and sending an explicit input, and a :class:`PendingTurn` owner
is created for it. Each path then reports how the turn ended to that owner;
the owner alone decides whether it writes (S1) and writes at most once (S3).

Streams (:class:`_TurnStream`) have three finishers that can race: the stream
end (inference ran to the end), the interrupt callback
(:meth:`Ledger.interrupt`) and the cancellation handler (the client went
away). Each reports to the owner; the first report settles the turn.

Failed writes (S7): :class:`~ledger.store.WriteFailedError` fails ``query``
and blocking ``responses``; on streams and on the interrupt path it is logged
and the stream ends normally.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ledger.compaction import Summarizer, extractive_summary, plan_request
from ledger.config import CompactionConfig
from ledger.items import JSONObject, normalize_input, refusal_message
from ledger.owner import PendingTurn
from ledger.server import (
    Completed,
    InferenceServer,
    ServerEvent,
    ServerRequest,
    UnknownResponseError,
)
from ledger.shields import Shield
from ledger.store import ConversationStore, WriteFailedError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Request:
    """A chat request as an endpoint receives it."""

    input: str | Sequence[Mapping[str, Any]]
    conversation: str
    store: bool = True
    previous_response_id: str | None = None


@dataclass(frozen=True)
class Reply:
    """The answer of a blocking path."""

    request_id: str
    conversation: str
    output: tuple[JSONObject, ...]
    #: the server's recorded response (continuable), if any
    response_id: str | None
    compacted: bool
    blocked: bool = False


EventType = Literal["created", "delta", "refusal", "done", "interrupted"]


@dataclass(frozen=True)
class StreamEvent:
    """One event of a streamed answer.

    ``created`` (first; carries ``request_id`` for :meth:`Ledger.interrupt` and
    whether the request was ``compacted``), then ``delta`` text, or a
    ``refusal``; it ends with ``done`` (carrying ``response_id`` when the
    server recorded one) or ``interrupted``.
    """

    type: EventType
    request_id: str
    text: str = ""
    compacted: bool = False
    response_id: str | None = None


@dataclass(frozen=True)
class _Prepared:
    request_id: str
    conversation: str
    server_request: ServerRequest
    owner: PendingTurn
    original_input: tuple[JSONObject, ...]


def _uuid_request_ids() -> str:
    return f"req_{uuid.uuid4().hex}"


def counting_request_ids(prefix: str = "req_") -> Callable[[], str]:
    numbers = itertools.count(1)
    return lambda: f"{prefix}{next(numbers)}"


class Ledger:
    """Serves chat requests over an inference server; settles every turn.

    ``shield`` is consulted on the ``responses`` paths only. ``summarizer``
    writes the text of compaction summary markers.
    """

    def __init__(
        self,
        store: ConversationStore,
        server: InferenceServer,
        config: CompactionConfig,
        *,
        shield: Shield | None = None,
        summarizer: Summarizer = extractive_summary,
        instructions: str = "",
        request_ids: Callable[[], str] = _uuid_request_ids,
    ) -> None:
        self._store = store
        self._server = server
        self.config = config
        self._shield = shield
        self._summarizer = summarizer
        self.instructions = instructions
        self._request_ids = request_ids
        self._streams: dict[str, _TurnStream] = {}

    def create_conversation(self, conversation_id: str | None = None) -> str:
        return self._store.create_conversation(conversation_id)

    # -- blocking paths ------------------------------------------------------

    async def query(self, request: Request) -> Reply:
        prepared = self._prepare(request)
        response = await self._server.create(prepared.server_request)
        prepared.owner.report_completed(response.output)
        prepared.owner.finish()
        return self._reply(prepared, response.output, response.id if response.recorded else None)

    async def responses(self, request: Request) -> Reply:
        prepared = self._prepare(request)
        refusal = self._shield_refusal(prepared)
        if refusal is not None:
            prepared.owner.report_blocked(refusal)
            prepared.owner.finish()
            return self._reply(prepared, _refusal_output(refusal), None, blocked=True)
        response = await self._server.create(prepared.server_request)
        prepared.owner.report_completed(response.output)
        prepared.owner.finish()
        return self._reply(prepared, response.output, response.id if response.recorded else None)

    # -- streaming paths -----------------------------------------------------

    async def streaming_query(self, request: Request) -> AsyncIterator[StreamEvent]:
        prepared = self._prepare(request)
        async with contextlib.aclosing(_TurnStream(self, prepared).events()) as events:
            async for event in events:
                yield event

    async def responses_stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        prepared = self._prepare(request)
        refusal = self._shield_refusal(prepared)
        if refusal is not None:
            try:
                prepared.owner.report_blocked(refusal)
            except WriteFailedError:
                log.exception("could not store blocked turn %s", prepared.request_id)
            compacted = prepared.owner.compacted
            yield StreamEvent("created", prepared.request_id, compacted=compacted)
            yield StreamEvent("refusal", prepared.request_id, text=refusal)
            yield StreamEvent("done", prepared.request_id)
            prepared.owner.finish()
            return
        async with contextlib.aclosing(_TurnStream(self, prepared).events()) as events:
            async for event in events:
                yield event

    def interrupt(self, request_id: str) -> bool:
        """The client interrupts a stream. True when this settled its turn.

        Unknown or finished streams are left alone (False).
        """
        stream = self._streams.get(request_id)
        if stream is None:
            return False
        return stream.interrupt()

    def active_streams(self) -> list[str]:
        return list(self._streams)

    # -- shared --------------------------------------------------------------

    def _prepare(self, request: Request) -> _Prepared:
        if not isinstance(request.store, bool):
            raise TypeError("store must be a bool")
        conversation = self._store.items(request.conversation)
        previous = request.previous_response_id
        if previous is not None and self._store.response(previous) is None:
            raise UnknownResponseError(previous)
        new_input = normalize_input(request.input)
        plan = plan_request(
            conversation,
            new_input,
            instructions=self.instructions,
            config=self.config,
            summarizer=self._summarizer,
        )
        if plan.compacted:
            assert plan.explicit_input is not None
            server_request = ServerRequest(
                plan.explicit_input, store=request.store, instructions=self.instructions
            )
        else:
            server_request = ServerRequest(
                plan.original_input,
                conversation=request.conversation if previous is None else None,
                previous_response_id=previous,
                store=request.store,
                instructions=self.instructions,
            )
        owner = PendingTurn(
            self._store,
            request.conversation,
            server_request.input,
            store_turn=request.store,
            server_has_conversation=server_request.conversation is not None,
            compacted=plan.compacted,
            original_input=plan.original_input,
            summary=plan.summary,
        )
        return _Prepared(
            self._request_ids(), request.conversation, server_request, owner, plan.original_input
        )

    def _shield_refusal(self, prepared: _Prepared) -> str | None:
        if self._shield is None:
            return None
        return self._shield.check(prepared.original_input)

    @staticmethod
    def _reply(
        prepared: _Prepared,
        output: Sequence[JSONObject],
        response_id: str | None,
        *,
        blocked: bool = False,
    ) -> Reply:
        return Reply(
            prepared.request_id,
            prepared.conversation,
            tuple(output),
            response_id,
            prepared.owner.compacted,
            blocked,
        )


def _refusal_output(refusal: str) -> tuple[JSONObject, ...]:
    return (refusal_message(refusal),)


class _TurnStream:
    """One streamed turn: relays server events and runs the three finishers."""

    def __init__(self, ledger: Ledger, prepared: _Prepared) -> None:
        self._ledger = ledger
        self._prepared = prepared
        self.owner = prepared.owner
        self.request_id = prepared.request_id
        self.streamed: list[str] = []
        self._stop_requested = False
        self._pull: asyncio.Task[ServerEvent] | None = None

    async def events(self) -> AsyncGenerator[StreamEvent, None]:
        request_id = self.request_id
        server_stream = self._ledger._server.stream(self._prepared.server_request)
        self._ledger._streams[request_id] = self
        try:
            yield StreamEvent("created", request_id, compacted=self.owner.compacted)
            while not self._stop_requested:
                self._pull = asyncio.ensure_future(self._next_event(server_stream))
                await asyncio.wait({self._pull})
                pull, self._pull = self._pull, None
                if pull.cancelled():
                    break
                event = pull.result()
                if isinstance(event, Completed):
                    response = event.response
                    response_id = response.id if response.recorded else None
                    yield StreamEvent("done", request_id, response_id=response_id)
                    self.owner.finish()
                    return
                if self._stop_requested:
                    break
                self.streamed.append(event.text)
                yield StreamEvent("delta", request_id, text=event.text)
            yield StreamEvent("interrupted", request_id)
            self.owner.finish()
        except (asyncio.CancelledError, GeneratorExit):
            self._cancelled()
            raise
        finally:
            del self._ledger._streams[request_id]
            await self._stop_inference(server_stream)

    async def _next_event(self, server_stream: AsyncIterator[ServerEvent]) -> ServerEvent:
        event = await anext(server_stream)
        if isinstance(event, Completed):
            # No await between the server's own write and this report: an
            # interrupt can never see a finished inference as unsettled.
            self._stream_end(event)
        return event

    def _stream_end(self, event: Completed) -> None:
        """Finisher 1: inference ran to the end."""
        try:
            self.owner.report_completed(event.response.output)
        except WriteFailedError:
            log.exception("could not store streamed turn %s", self.request_id)

    def interrupt(self) -> bool:
        """Finisher 2: the interrupt callback. Settles with what was streamed, stops inference."""
        try:
            settled = self.owner.report_interrupted(self.streamed)
        except WriteFailedError:
            log.exception("could not store interrupted turn %s", self.request_id)
            settled = True
        self._stop_requested = True
        if self._pull is not None:
            self._pull.cancel()
        return settled

    def _cancelled(self) -> None:
        """Finisher 3: the cancellation handler (the client's task was cancelled or closed us)."""
        try:
            self.owner.report_interrupted(self.streamed)
        except WriteFailedError:
            log.exception("could not store cancelled turn %s", self.request_id)

    async def _stop_inference(self, server_stream: AsyncIterator[ServerEvent]) -> None:
        pull, self._pull = self._pull, None
        if pull is not None and not pull.done():
            pull.cancel()
            await asyncio.wait({pull})
        if pull is not None and not pull.cancelled() and pull.exception() is not None:
            log.error("inference failed while stopping stream %s", self.request_id)
        closer = getattr(server_stream, "aclose", None)
        if closer is not None:
            await closer()
