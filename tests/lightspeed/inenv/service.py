"""The one lightspeed-stack service of a test session, started on first use.

The app, OGX and the fake LLM start once (one run configuration per session);
each Hypothesis example works in fresh conversations. The fake LLM's answers
come from :data:`SCRIPTS`, keyed by the request's tag (the first word of its
newest user message), which each test fills before it sends the request.
"""

from __future__ import annotations

from ctxaudit.targets.lightspeed.fake_llm import Call, Reply
from ctxaudit.targets.lightspeed.harness import RunConfig, Service

CONFIG = RunConfig(window=200, ratio=0.5, floor=0, buffer=1)
SCRIPTS: dict[str, Reply] = {}
_service: Service | None = None


def tag_of(call: Call) -> str:
    users = call.texts("user")
    return users[-1].split(" ")[0] if users else ""


def _script(call: Call) -> Reply:
    tag = tag_of(call)
    reply = SCRIPTS.get(tag)
    if reply is None:
        return Reply(status=500, error=f"no script for {tag!r}")
    return reply


def get() -> Service:
    global _service
    if _service is None:
        _service = Service(CONFIG, _script).start()
    return _service


def stop() -> None:
    global _service
    if _service is not None:
        _service.stop()
        _service = None
