"""The one lightspeed-stack service of a test session, started on first use.

The app, OGX and the fake LLM start once; each Hypothesis example works in fresh
conversations, under a compaction configuration of :data:`CONFIGS` it draws
(:func:`configure`). The fake LLM's answers
come from :data:`SCRIPTS`, keyed by the request's tag (the first word of its
newest user message), which each test fills before it sends the request.
"""

from __future__ import annotations

from ctxaudit.targets.lightspeed.fake_llm import Call, Reply
from ctxaudit.targets.lightspeed.harness import RunConfig, Service

#: the configuration a run starts under, and the fixed programs run under
CONFIG = RunConfig(window=200, ratio=0.5, floor=0, buffer=1)
#: the configurations the lockstep draws from (at its start and between requests), each
#: with a side of C1 or of the fold the others leave unchecked: the token floor above
#: the ratio's side of the threshold, two turns kept verbatim, none kept, another ratio
#: on another window, a cap on the kept turns' size that two short turns pass and a
#: padded one does not
CONFIGS = (
    CONFIG,
    RunConfig(window=200, ratio=0.5, floor=140, buffer=1),
    RunConfig(window=200, ratio=0.5, floor=0, buffer=2),
    RunConfig(window=200, ratio=0.5, floor=0, buffer=0),
    RunConfig(window=240, ratio=0.75, floor=0, buffer=1),
    RunConfig(window=200, ratio=0.5, floor=0, buffer=2, buffer_ratio=0.25),
)
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


def configure(config: RunConfig) -> Service:
    """The service, serving the next requests under ``config``."""
    ls = get()
    ls.configure(config)
    return ls
