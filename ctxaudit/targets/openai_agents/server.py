"""A fake OpenAI Responses server on 127.0.0.1 (standard library only): the one LLM the
openai-agents suites talk to.

- ``POST /v1/responses``: the next scripted reply (:class:`Text`, :class:`Call` or
  :class:`Down`); with none scripted, a text ``ok<n>``. The request's input and the
  reply's output are recorded under the new response id, so a later
  ``previous_response_id`` names exactly what this server saw.
- ``POST /v1/responses/compact``: the user messages of the compacted history, then one
  ``compaction`` item whose ``encrypted_content`` is ``enc:<length of that history>``
  (the shape the SDK documents: "all the items except user messages ... compacted
  into a single encrypted content"). The history is the request's ``input``, or, with
  ``previous_response_id``, the input and output recorded for that id (a response
  made with ``store: false`` is not recorded, and naming it answers 404). It answers
  ``compact_status`` when that is not 200, and waits on ``hold`` when it is set (the
  asyncio loop of the caller runs on meanwhile: that is how a write lands during a
  compaction, with no sleep deciding anything).

Every request is recorded, in order (:attr:`FakeResponses.requests`); an error in the
fake itself is recorded apart (:attr:`FakeResponses.errors`), for the adapter to report
as ctxaudit's own, never as the target's. Every item id and
call id the server makes is new, so the SDK's de-duplication by id never merges two
items. Deterministic: nothing depends on time.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

JSON = dict[str, Any]
COMPACT_DOWN = "ctxaudit: the compact endpoint is down"
MODEL_DOWN = "ctxaudit: the model is down"


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Call:
    name: str
    arguments: str = "{}"


@dataclass(frozen=True)
class Down:
    status: int = 500


Reply = Text | Call | Down


def usage(inp: int, out: int) -> JSON:
    return {
        "input_tokens": inp,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": inp + out,
    }


def content_text(item: JSON) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return ""


def label(item: JSON) -> str:
    """One short label per item: ``u:``/``a:``/``d:`` (user, assistant, developer text),
    ``fc:<name><arguments>``, ``out:<output>``, ``CMP:<encrypted content>``."""
    kind = item.get("type")
    if kind == "compaction":
        return f"CMP:{item.get('encrypted_content')}"
    if kind == "function_call":
        return f"fc:{item.get('name')}{item.get('arguments')}"
    if kind == "function_call_output":
        return f"out:{item.get('output')}"
    role = item.get("role")
    if role == "user":
        return f"u:{content_text(item)}"
    if role in ("developer", "system"):
        return f"d:{content_text(item)}"
    if role == "assistant":
        return f"a:{content_text(item)}"
    return f"?:{kind}"


def labels(items: Sequence[JSON]) -> list[str]:
    return [label(i) for i in items]


class FakeResponses:
    def __init__(self) -> None:
        self.script: list[Reply] = []
        self.requests: list[tuple[str, JSON]] = []  # (path, body), in arrival order
        self.errors: list[str] = []  # the fake's own failures (ctxaudit's, not the target's)
        self.by_id: dict[str, tuple[list[JSON], list[JSON]]] = {}
        self.compact_status = 200
        self.compact_usage = (7, 3)
        self.hold: threading.Event | None = None
        self.compact_seen = threading.Event()
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            # headers and body go out in two writes: without this, each reply waits
            # for the client's delayed acknowledgement of the first
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                try:
                    status, out = fake._answer(self)
                except Exception as exc:  # the fake's own error: never the target's
                    fake.errors.append(f"{self.path}: {type(exc).__name__}: {exc}")
                    status, out = 599, {"error": {"message": "ctxaudit: the fake failed"}}
                data = json.dumps(out).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        self.base_url = f"http://127.0.0.1:{self.server.server_port}/v1"

    def _answer(self, handler: BaseHTTPRequestHandler) -> tuple[int, JSON]:
        length = int(handler.headers.get("Content-Length") or 0)
        body = json.loads(handler.rfile.read(length) or b"{}")
        with self._lock:
            self.requests.append((handler.path, body))
        if handler.path.endswith("/responses/compact"):
            return self._compact(body)
        if handler.path.endswith("/responses"):
            return self._respond(body)
        return 404, {"error": {"message": f"no route {handler.path}"}}

    def _serve(self) -> None:
        # a short poll, so that close() returns at once (shutdown waits for the next poll)
        self.server.serve_forever(poll_interval=0.01)

    def close(self) -> None:
        if self.hold is not None:
            self.hold.set()
        self.server.shutdown()
        self.server.server_close()

    def next_id(self) -> int:
        with self._lock:
            return next(self._ids)

    # ------------------------------------------------------------------ endpoints

    def _respond(self, body: JSON) -> tuple[int, JSON]:
        n = self.next_id()
        rid = f"resp_{n}"
        with self._lock:
            step = self.script.pop(0) if self.script else Text(f"ok{n}")
        if isinstance(step, Down):
            return step.status, {"error": {"message": MODEL_DOWN, "type": "server_error"}}
        if isinstance(step, Text):
            item: JSON = {
                "type": "message",
                "id": f"msg_{n}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": step.text, "annotations": []}],
            }
        else:
            item = {
                "type": "function_call",
                "id": f"fc_{n}",
                "call_id": f"call_{n}",
                "name": step.name,
                "arguments": step.arguments,
                "status": "completed",
            }
        raw = body.get("input")
        inp = [{"role": "user", "content": raw}] if isinstance(raw, str) else list(raw or [])
        prev = body.get("previous_response_id")
        if prev in self.by_id:
            before_in, before_out = self.by_id[prev]
            inp = before_in + before_out + inp
        if body.get("store") is not False:  # an unstored response cannot be named later
            self.by_id[rid] = (inp, [item])
        return 200, {
            "id": rid,
            "object": "response",
            "created_at": 0,
            "model": body.get("model", "gpt-4.1"),
            "status": "completed",
            "output": [item],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": usage(10, 2),
        }

    def compacted_history(self, body: JSON) -> list[JSON] | None:
        """What a compact request covers: its input, or what its response id saw (None:
        an id the server never stored)."""
        if body.get("previous_response_id"):
            if body["previous_response_id"] not in self.by_id:
                return None
            before_in, before_out = self.by_id[body["previous_response_id"]]
            return before_in + before_out
        return list(body.get("input") or [])

    def _compact(self, body: JSON) -> tuple[int, JSON]:
        self.compact_seen.set()
        if self.hold is not None:
            self.hold.wait()
        if self.compact_status != 200:
            error = {"message": COMPACT_DOWN, "type": "server_error"}
            return self.compact_status, {"error": error}
        history = self.compacted_history(body)
        if history is None:  # what the API answers for an unstored or unknown response
            error = {"message": "previous response not found", "type": "invalid_request_error"}
            return 404, {"error": error}
        users: list[JSON] = [
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": content_text(h)}],
            }
            for h in history
            if h.get("role") == "user"
        ]
        n = self.next_id()
        compaction = {
            "type": "compaction",
            "id": f"cmp_{n}",
            "encrypted_content": f"enc:{len(history)}",
        }
        return 200, {
            "id": f"cmpresp_{n}",
            "object": "response.compaction",
            "created_at": 0,
            "output": [*users, compaction],
            "usage": usage(*self.compact_usage),
        }

    # ------------------------------------------------------------------ the record

    def model_requests(self) -> list[JSON]:
        return [b for p, b in self.requests if p.endswith("/responses")]

    def compact_requests(self) -> list[JSON]:
        return [b for p, b in self.requests if p.endswith("/responses/compact")]
