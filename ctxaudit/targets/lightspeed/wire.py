"""What crosses the wire between the suite and a lightspeed-stack app.

- :class:`StreamingASGITransport`: httpx's own ``ASGITransport`` runs the app
  to the end before the client sees a byte, so a client can neither read a
  stream as it comes nor stop reading in the middle. This transport runs the
  app as a task and hands the body over chunk by chunk; a client that closes
  the response early sends the app ``http.disconnect``, as a real server does
  when the connection drops. The app then finishes (its cancellation
  handlers included) before the close returns; an app still running at the
  end of the settle wait is one ctxaudit could not check (``CouldNotCheck``),
  never a verdict on what it had stored so far.
- SSE parsing and what the client reads out of events (:func:`absorb`).
- The normalized views the lockstep compares: :class:`ItemView` for
  conversation items and LLM messages.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from ctxaudit.outcomes import CouldNotCheck
from ctxaudit.targets.lightspeed.fake_llm import message_text

#: how lightspeed-stack renders a summary in a compacted request's explicit input
SUMMARY_PREFIX = "Summary of earlier conversation:\n"


class StreamingASGITransport(httpx.AsyncBaseTransport):  # type: ignore[misc]
    """An in-process transport that streams, and lets a client hang up."""

    def __init__(self, app: Any, *, settle_seconds: float = 30.0) -> None:
        self.app = app
        self.settle_seconds = settle_seconds

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        scope = {
            "type": "http",
            # what uvicorn (lightspeed-stack's server) announces: Starlette then
            # listens for the disconnect and cancels a stream when it comes
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": request.method,
            "headers": [(k.lower(), v) for k, v in request.headers.raw],
            "scheme": request.url.scheme,
            "path": request.url.path,
            "raw_path": request.url.raw_path.split(b"?")[0],
            "query_string": request.url.query,
            "server": (request.url.host, request.url.port or 80),
            "client": ("127.0.0.1", 50000),
            "root_path": "",
        }
        started: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        chunks: asyncio.Queue[bytes | None] = asyncio.Queue()
        hung_up = asyncio.Event()
        request_read = False

        async def receive() -> dict[str, Any]:
            nonlocal request_read
            if not request_read:
                request_read = True
                return {"type": "http.request", "body": body, "more_body": False}
            await hung_up.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and not started.done():
                started.set_result(message)
            elif message["type"] == "http.response.body":
                if message.get("body"):
                    chunks.put_nowait(message["body"])
                if not message.get("more_body", False):
                    chunks.put_nowait(None)

        async def run() -> None:
            try:
                await self.app(scope, receive, send)
            except BaseException as exc:
                if not started.done():
                    started.set_exception(exc)
                    return
                # the app already answered (a 500 its middleware sent, then re-raised)
            finally:
                chunks.put_nowait(None)

        task = asyncio.get_running_loop().create_task(run())
        message = await started
        stream = _BodyStream(chunks, hung_up, task, self.settle_seconds)
        return httpx.Response(message["status"], headers=message.get("headers", []), stream=stream)


class _BodyStream(httpx.AsyncByteStream):  # type: ignore[misc]
    def __init__(
        self,
        chunks: asyncio.Queue[bytes | None],
        hung_up: asyncio.Event,
        task: asyncio.Task[None],
        settle_seconds: float,
    ) -> None:
        self._chunks = chunks
        self._hung_up = hung_up
        self._task = task
        self._settle = settle_seconds
        self._ended = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while not self._ended:
            chunk = await self._chunks.get()
            if chunk is None:
                self._ended = True
                break
            yield chunk

    async def aclose(self) -> None:
        if not self._ended:  # the client stops reading: the connection drops
            self._hung_up.set()
        # the app's handlers (cancellation, background tasks) finish first
        _, pending = await asyncio.wait([self._task], timeout=self._settle)
        if pending:
            raise CouldNotCheck(
                f"the app's request task was still running {self._settle:g} s after the "
                "response was closed, so what it stores is not settled"
            )


@dataclass
class Response:
    """What a client got back: HTTP status, the answer's text, ids, SSE events."""

    status: int
    answer: str = ""
    conversation: str | None = None
    response_id: str | None = None
    request_id: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    body: Any = None
    #: an error the stream reported in an SSE event (the HTTP status stays 200)
    error: str = ""
    #: a stream's closing event arrived (``end`` on /v1/streaming_query,
    #: ``response.completed`` on /v1/responses); a stream that stopped short has none
    ended: bool = False
    #: the status of the interrupt request, when the client sent one
    interrupt_status: int | None = None
    #: A2A: the context the message was sent in, and the task's last state
    a2a_context: str | None = None
    a2a_state: str = ""


@dataclass(frozen=True)
class ItemView:
    """One conversation item as the lockstep compares it."""

    kind: str  # input | output | summary
    role: str
    text: str

    def __str__(self) -> str:
        return f"{self.kind:<7} {self.role:<9} {self.text!r}"


def content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for part in content:
        text = getattr(part, "text", None)
        if text is None:
            text = getattr(part, "refusal", None)
        if text is None and isinstance(part, dict):
            text = part.get("text", part.get("refusal"))
        if text:
            parts.append(str(text))
    return " ".join(parts)


def output_text(output: list[dict[str, Any]]) -> str:
    """The text of a Responses API output: its messages' content (parts or a plain string)."""
    texts = []
    for item in output:
        if item.get("type") != "message":
            continue
        content = item.get("content") or []
        if isinstance(content, str):
            texts.append(content)
            continue
        texts += [str(part.get("text", part.get("refusal", ""))) for part in content]
    return "".join(texts)


async def sse(lines: AsyncIterator[str]) -> AsyncIterator[dict[str, Any]]:
    """SSE events as dicts: ``event`` (name) plus the JSON ``data``."""
    name = "message"
    async for line in lines:
        if line.startswith("event:"):
            name = line.split(":", 1)[1].strip()
        elif line.startswith("data:"):
            raw = line.split(":", 1)[1].strip()
            try:
                data = json.loads(raw)
            except ValueError:
                data = {"raw": raw}
            if not isinstance(data, dict):
                data = {"value": data}
            yield {"event": name, **data}
            name = "message"


def absorb(response: Response, event: dict[str, Any]) -> None:
    """Pick the answer and ids out of one SSE event (either endpoint's format)."""
    kind = event.get("event", "")
    data = event.get("data") if isinstance(event.get("data"), dict) else event
    assert isinstance(data, dict)
    etype = str(data.get("type", kind))
    if kind == "start" or etype == "start":
        response.conversation = data.get("conversation_id") or response.conversation
        response.request_id = data.get("request_id") or response.request_id
    if kind == "end" or etype in ("end", "response.completed"):
        response.ended = True
    if kind == "error" or etype in ("error", "response.failed"):
        response.error = json.dumps(data)[:500]
    if kind == "token" or etype == "token":
        token = data.get("token")
        if isinstance(token, str):
            response.answer += token
            event["_delta"] = token
    if etype == "response.output_text.delta":
        delta = data.get("delta")
        if isinstance(delta, str):
            response.answer += delta
            event["_delta"] = delta
    if etype in ("response.created", "response.completed"):
        body = data.get("response") or {}
        response.response_id = body.get("id") or response.response_id
        if etype == "response.completed" and not response.answer:  # no deltas: a refusal
            response.answer = output_text(body.get("output") or [])
        conv = body.get("conversation")
        response.conversation = conv or response.conversation


def message_view(message: dict[str, Any], sentinel: str, notice: str = "") -> ItemView:
    """A chat message the fake LLM received, in the lockstep's view; ``notice`` is what
    the tree appends to an answer cut short (dropped, as from what OGX lists)."""
    role = str(message.get("role", ""))
    text = message_text(message)
    if notice and role == "assistant" and text.endswith(notice):
        text = text[: -len(notice)]
    if text.startswith(SUMMARY_PREFIX):
        return ItemView("summary", role, text[len(SUMMARY_PREFIX) :].strip())
    if text.startswith(sentinel):
        return ItemView("summary", role, text[len(sentinel) :].strip())
    kinds = {"user": "input", "system": "system"}
    return ItemView(kinds.get(role, "output"), role, text)
