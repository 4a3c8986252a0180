"""Reading a lightspeed-stack tree's streaming answers in the harness (:mod:`.harness`):
the SSE events of one request, and the stops a client makes mid-answer: a hang-up, the
tree's interrupt endpoint, or a hang-up whose interrupt arrives while the tree stores
the turn cut short (its write's acknowledgement held, :class:`SlowAck`)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ctxaudit.outcomes import CouldNotCheck

if TYPE_CHECKING:
    from ctxaudit.targets.lightspeed.harness import Service
    from ctxaudit.targets.lightspeed.wire import Response

#: seconds a stopped stream may take to end (its interrupt acted on): a bound that
#: only turns a stuck run into CouldNotCheck, never a verdict
STOP_SETTLE = 30.0


@dataclass
class SlowAck:
    """A conversation write whose acknowledgement the harness holds: ``stored`` is set
    once the write is stored, and the write returns once ``acknowledged`` is set."""

    stored: asyncio.Event = field(default_factory=asyncio.Event)
    acknowledged: asyncio.Event = field(default_factory=asyncio.Event)
    #: the stream the client stopped
    request_id: str | None = None


async def hang_up_then_interrupt(
    service: Service, path: str, payload: dict[str, Any], stop_after: int
) -> Response:
    """A hang-up whose interrupt reaches the tree while it stores the turn: sent
    once the tree's first write after the hang-up is stored, whose acknowledgement
    is released once the interrupt is answered. A tree that stores nothing gets
    no interrupt."""
    slow = SlowAck()

    async def interrupt_when_stored() -> tuple[int, set[asyncio.Task[Any]]]:
        """The interrupt's status, and the tasks the app started while answering it
        (the interrupt callback's, which stores the turn on its own)."""
        try:
            await slow.stored.wait()
            if not slow.request_id:
                raise CouldNotCheck("the stream named no request id to interrupt")
            before = asyncio.all_tasks()
            stop = await service.http.post(
                "/v1/streaming_query/interrupt", json={"request_id": slow.request_id}
            )
            return int(stop.status_code), asyncio.all_tasks() - before
        finally:
            slow.acknowledged.set()

    interrupter = asyncio.get_running_loop().create_task(interrupt_when_stored())
    try:
        response = await read_stream(service, path, payload, stop_after, False, slow)
    finally:
        service.slow_ack = None
        if not interrupter.done():  # the tree stored nothing: no interrupt sent
            interrupter.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        response.interrupt_status, started = await interrupter
        # what the interrupt started finishes before the conversation is read
        started.discard(asyncio.current_task())
        if started:
            _, pending = await asyncio.wait(started, timeout=STOP_SETTLE)
            if pending:
                raise CouldNotCheck(
                    f"{len(pending)} task(s) the interrupt started still ran "
                    f"{STOP_SETTLE:g} s after it was answered"
                )
    return response


async def read_stream(
    service: Service,
    path: str,
    payload: dict[str, Any],
    stop_after: int | None,
    interrupt: bool,
    slow: SlowAck | None = None,
) -> Response:
    from ctxaudit.targets.lightspeed.wire import Response, absorb, sse

    response = Response(status=0)
    deltas = 0
    async with service.http.stream("POST", path, json=payload) as reply:
        response.status = reply.status_code
        if reply.status_code != 200:
            await reply.aread()
            response.body = reply.text
            return response
        events = sse(reply.aiter_lines())
        async for event in events:
            response.events.append(event)
            absorb(response, event)
            if event.get("_delta") is None:
                continue
            deltas += 1
            if stop_after is None or deltas != stop_after:
                continue
            if not interrupt:
                if slow is not None:  # the next write the tree makes is held
                    slow.request_id = response.request_id
                    service.slow_ack = slow
                break  # the client hangs up; the app sees a disconnect
            stop = await service.http.post(
                "/v1/streaming_query/interrupt", json={"request_id": response.request_id}
            )
            response.interrupt_status = stop.status_code
            if stop.status_code != 200:
                service.llm.release()  # not interrupted: the rest of the answer comes
                continue
            await read_on(events, response)
            break
    return response


async def read_on(events: AsyncIterator[dict[str, Any]], response: Response) -> None:
    """The rest of an interrupted stream, up to its end: the app's answer to the
    interrupt, read while the rest of the LLM's answer is held. A stream that does
    not end within :data:`STOP_SETTLE` is one ctxaudit could not check."""
    from ctxaudit.targets.lightspeed.wire import absorb

    try:
        async with asyncio.timeout(STOP_SETTLE):
            async for event in events:
                response.events.append(event)
                absorb(response, event)
    except TimeoutError as exc:
        raise CouldNotCheck(
            f"the stream did not end within {STOP_SETTLE:g} s of its interrupt being "
            "accepted, while the rest of the LLM's answer was held"
        ) from exc
