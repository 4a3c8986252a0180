"""A fake OpenAI Responses API on 127.0.0.1 for the programs beside it (stdlib only).

POST /v1/responses answers a text message ``ok<n>``; POST /v1/responses/compact answers
the user messages of the compacted history, then one compaction item ``enc:<length>``
(the history: the request's ``input``, or what the server saw for its
``previous_response_id``). ``compact_status`` makes the compact call fail; ``hold``, when
set, makes it wait until released. Every compact request body is kept in ``compacts``.
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def text_of(item):
    c = item.get("content")
    if isinstance(c, list):
        return "".join(x.get("text", "") for x in c if isinstance(x, dict))
    return c if isinstance(c, str) else ""


def show(items):
    """u:/a: text, fc:/out: tool items, CMP: compaction items."""
    out = []
    for i in items:
        if i.get("type") == "compaction":
            out.append("CMP:" + i["encrypted_content"])
        else:
            out.append(f"{(i.get('role') or i.get('type', '?'))[0]}:{text_of(i)}")
    return out


class Fake:
    def __init__(self):
        self.n = 0
        self.seen = {}  # response id -> the input and output it saw
        self.compacts = []
        self.compact_status = 200
        self.hold = None
        self.compact_seen = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            # headers and body go out in two writes: without this, each reply waits
            # for the client's delayed acknowledgement of the first
            disable_nagle_algorithm = True

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path.endswith("/compact"):
                    status, out = fake.compact(body)
                else:
                    status, out = fake.respond(body)
                data = json.dumps(out).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self.server.server_port}/v1"

    def respond(self, body):
        self.n += 1
        item = {
            "type": "message", "id": f"msg_{self.n}", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": f"ok{self.n}", "annotations": []}],
        }  # fmt: skip
        inp = (
            body["input"]
            if isinstance(body["input"], list)
            else [{"role": "user", "content": body["input"]}]
        )
        self.seen[f"resp_{self.n}"] = inp + [item]
        return 200, {
            "id": f"resp_{self.n}", "object": "response", "created_at": 0,
            "model": body["model"], "status": "completed", "output": [item],
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
            "usage": usage(10, 2),
        }  # fmt: skip

    def compact(self, body):
        self.compacts.append(body)
        self.compact_seen.set()
        if self.hold is not None:
            self.hold.wait()
        if self.compact_status != 200:
            return self.compact_status, {
                "error": {"message": "compact down", "type": "server_error"}
            }
        history = self.seen.get(body.get("previous_response_id"), body.get("input") or [])
        users = [
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": text_of(h)}],
            }
            for h in history
            if h.get("role") == "user"
        ]
        self.n += 1
        cmp_item = {
            "type": "compaction",
            "id": f"cmp_{self.n}",
            "encrypted_content": f"enc:{len(history)}",
        }
        return 200, {
            "id": f"cmpresp_{self.n}", "object": "response.compaction", "created_at": 0,
            "output": users + [cmp_item], "usage": usage(7, 3),
        }  # fmt: skip


def usage(i, o):
    return {
        "input_tokens": i, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": o, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": i + o,
    }  # fmt: skip


def connect(fake):
    """Point the SDK (its default client, and the one returned) at the fake."""
    from agents import set_default_openai_client, set_tracing_disabled
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=fake.base_url, api_key="x", max_retries=0)
    set_default_openai_client(client, use_for_tracing=False)
    return client
