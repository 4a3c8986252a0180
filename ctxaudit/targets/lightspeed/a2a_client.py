"""A JSON-RPC client of a lightspeed-stack tree's A2A endpoint (``/a2a``).

A2A (Agent-to-Agent, protocol 0.3) sends a message in a *context*; the
tree's executor maps the context id to a conversation in its context store
(``a2a_state``; in memory here), after the context's first turn creates the
conversation. A request names no conversation, so a conversation that
started on another path gets a context the way a later A2A turn would find
one: :func:`link` writes the mapping into that same store, through the tree's
own accessor (``app.endpoints.a2a._get_context_store``). Everything else goes
over HTTP: ``message/send`` (the task, answered whole) and ``message/stream``
(SSE events of the task, its status updates and its artifact).

What a client reads out of either: the answer is the text of the task's
artifacts (the tree's final answer), the conversation id is the artifact's
(or the working status') ``metadata.conversation_id``, and anything but a
``completed`` task, or a JSON-RPC error, is an error.
"""

from __future__ import annotations

import importlib
import json
import uuid
from typing import TYPE_CHECKING, Any

from ctxaudit.targets.lightspeed.wire import Response, sse

if TYPE_CHECKING:
    from ctxaudit.targets.lightspeed.harness import Service

ENDPOINT = "/a2a"


def message(text: str, context: str | None, method: str) -> dict[str, Any]:
    """A JSON-RPC request carrying one user text message (in ``context``, when given)."""
    body: dict[str, Any] = {
        "kind": "message",
        "role": "user",
        "messageId": str(uuid.uuid4()),
        "parts": [{"kind": "text", "text": text}],
    }
    if context:
        body["contextId"] = context
    return {"jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": method,
            "params": {"message": body}}  # fmt: skip


async def link(context: str, conversation: str) -> None:
    """Map A2A ``context`` to ``conversation`` in the tree's context store."""
    endpoint = importlib.import_module("app.endpoints.a2a")
    store = await endpoint._get_context_store()
    await store.set(context, conversation)


def absorb_result(response: Response, result: dict[str, Any]) -> None:
    """Pick the answer, the ids and the task's state out of one JSON-RPC result."""
    response.a2a_context = result.get("contextId") or response.a2a_context
    artifacts = [a for a in [result.get("artifact"), *(result.get("artifacts") or [])] if a]
    if artifacts:  # the final answer (the deltas come as working status messages)
        response.answer = "".join(_parts_text(a.get("parts")) for a in artifacts)
    for artifact in artifacts:
        response.conversation = _conversation(artifact) or response.conversation
    response.conversation = _conversation(result) or response.conversation
    status = result.get("status")
    if isinstance(status, dict) and status.get("state"):  # the last one seen is the task's end
        said = _parts_text((status.get("message") or {}).get("parts"))
        response.a2a_state = f"{status['state']}{': ' + said if said else ''}"[:500]


async def send(service: Service, text: str, context: str | None, *, stream: bool) -> Response:
    """One A2A message: ``message/stream`` when ``stream``, ``message/send`` otherwise."""
    payload = message(text, context, "message/stream" if stream else "message/send")
    response = Response(status=0, a2a_context=context)
    if not stream:
        reply = await service.http.post(ENDPOINT, json=payload)
        response.status = reply.status_code
        try:
            response.body = reply.json()
        except ValueError:
            response.body = reply.text
        _absorb_rpc(response, response.body)
        return _ended(response)
    async with service.http.stream("POST", ENDPOINT, json=payload) as reply:
        response.status = reply.status_code
        if reply.status_code != 200:
            await reply.aread()
            response.body = reply.text
            return response
        async for event in sse(reply.aiter_lines()):
            response.events.append(event)
            _absorb_rpc(response, event)
    return _ended(response)


def _ended(response: Response) -> Response:
    """A task that did not complete is an error (HTTP 200 all the same)."""
    if response.status == 200 and not response.error and _state(response) != "completed":
        response.error = f"task {response.a2a_state or 'without a state'}"
    return response


def _absorb_rpc(response: Response, body: Any) -> None:
    if not isinstance(body, dict):
        response.error = f"not a JSON-RPC response: {str(body)[:200]}"
        return
    if body.get("error"):
        response.error = json.dumps(body["error"])[:500]
    result = body.get("result")
    if isinstance(result, dict):
        absorb_result(response, result)


def _state(response: Response) -> str:
    return response.a2a_state.split(":", 1)[0]


def _parts_text(parts: Any) -> str:
    if not isinstance(parts, list):
        return ""
    return "".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))


def _conversation(holder: dict[str, Any]) -> str | None:
    metadata = holder.get("metadata")
    if isinstance(metadata, dict) and metadata.get("conversation_id"):
        return str(metadata["conversation_id"])
    return None
