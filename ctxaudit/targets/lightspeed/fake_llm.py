"""The only fake part of a lightspeed-stack run: an OpenAI-compatible LLM on 127.0.0.1.

OGX (the real inference server, in-process) is configured with this server as
its ``remote::openai`` inference provider. Every chat completion OGX asks for
is answered by a *script*: a function of the request body that returns what
to play back (:class:`Reply`). Summarization calls are answered by the
caller's script too, as a deterministic function of what was sent, so the
reference model predicts summary markers exactly.

Standard library only, so it runs in ctxaudit's interpreter and in a target's
Python 3.12 environment alike. It binds a free port on 127.0.0.1, records
every request it served (:attr:`FakeLLM.calls`) and stops with
:meth:`FakeLLM.stop` (or the ``with`` block).

A client that stops a stream in the middle (an interrupt, a hang-up) must not
race the LLM: :meth:`FakeLLM.hold` makes every streamed answer send its first
chunks and then wait, before the next chunk, until :meth:`FakeLLM.release`.
The harness releases once the app has acted on the stop, so what the app saw
of the answer is the same on an idle machine and a loaded one.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL_ID = "fake-llm"


@dataclass(frozen=True)
class Reply:
    """What the fake LLM plays for one call.

    ``chunks``: the answer's text in pieces (streamed one per SSE event when
    the caller asked to stream; joined otherwise). ``status``: an HTTP error
    status instead of an answer (``error`` is its message).
    """

    chunks: tuple[str, ...] = ()
    status: int = 200
    error: str = ""

    @property
    def text(self) -> str:
        return "".join(self.chunks)


Script = Callable[[dict[str, Any]], Reply]


@dataclass(frozen=True)
class Hold:
    """Stream ``after`` chunks of an answer, then wait for ``released`` before the next."""

    after: int
    released: threading.Event


@dataclass
class Call:
    """One request the fake LLM served: its JSON body and what it played.

    ``hold``: the hold a streamed answer was played under (None: not held).
    """

    body: dict[str, Any]
    reply: Reply
    started: float = field(default_factory=time.monotonic)
    hold: Hold | None = None

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    def texts(self, role: str | None = None) -> list[str]:
        """The text of each message (of ``role``), content parts joined."""
        return [message_text(m) for m in self.messages if role is None or m.get("role") == role]


def message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


class FakeLLM:
    def __init__(self, script: Script) -> None:
        self.script = script
        self.calls: list[Call] = []
        self._lock = threading.Lock()
        self._hold: Hold | None = None
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> FakeLLM:
        self._thread.start()
        return self

    def hold(self, after: int) -> None:
        """From now on, every streamed answer with more than ``after`` chunks sends
        ``after`` of them and waits for :meth:`release` before the next."""
        with self._lock:
            self._release_locked()
            self._hold = Hold(after, threading.Event())

    def release(self) -> None:
        """Let every held answer go on; answers played from now on are not held."""
        with self._lock:
            self._release_locked()

    def _release_locked(self) -> None:
        if self._hold is not None:
            self._hold.released.set()
            self._hold = None

    def stop(self) -> None:
        self.release()  # no handler thread stays parked on a hold
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    def _play(self, body: dict[str, Any]) -> Call:
        try:
            reply = self.script(body)
        except Exception as exc:  # a broken script answers 500 and says why
            reply = Reply(status=500, error=f"fake LLM script failed: {exc!r}")
        with self._lock:
            hold = self._hold if body.get("stream") else None
            call = Call(body, reply, hold=hold)
            self.calls.append(call)
        return call


def _handler(llm: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_: Any) -> None:  # quiet
            pass

        def _json(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                model = {"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "ctxaudit"}
                self._json(200, {"object": "list", "data": [model]})
            else:
                self._json(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._json(404, {"error": {"message": f"no route {self.path}"}})
                return
            call = llm._play(body)
            reply = call.reply
            if reply.status != 200:
                error = {"message": reply.error, "type": "fake_error", "code": reply.status}
                self._json(reply.status, {"error": error})
                return
            if body.get("stream"):
                self._stream(body, reply, call.hold)
            else:
                self._json(200, _completion(body, reply))

        def _stream(self, body: dict[str, Any], reply: Reply, hold: Hold | None) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            base = _base(body)
            try:
                first = {**base, "choices": [_delta({"role": "assistant", "content": ""})]}
                self._event(first)
                for number, chunk in enumerate(reply.chunks):
                    if hold is not None and number == hold.after:
                        hold.released.wait()  # the client stops first, then the rest comes
                    self._event({**base, "choices": [_delta({"content": chunk})]})
                last = {**base, "choices": [_delta({}, finish="stop")]}
                if (body.get("stream_options") or {}).get("include_usage"):
                    last["usage"] = _usage(body, reply)
                self._event(last)
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client went away: an interrupted stream

        def _event(self, payload: dict[str, Any]) -> None:
            self.wfile.write(b"data: " + json.dumps(payload).encode() + b"\n\n")
            self.wfile.flush()

    return Handler


def _base(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": body.get("model", MODEL_ID),
    }


def _delta(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}


def _usage(body: dict[str, Any], reply: Reply) -> dict[str, int]:
    prompt = sum(len(message_text(m)) for m in body.get("messages") or []) // 4
    completion = len(reply.text) // 4
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    message = {"role": "assistant", "content": reply.text}
    return {
        **_base(body),
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}],
        "usage": _usage(body, reply),
    }
