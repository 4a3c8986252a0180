"""Run a lightspeed-stack tree for real, in-process, with only the LLM faked.

Runs inside the tree's own Python 3.12 environment (``env.py`` builds it),
with the tree's ``src`` on ``sys.path``. What is real: the tree's FastAPI app
and its endpoint handlers, reached by HTTP requests through an in-process
ASGI transport (streaming included), and the inference server OGX (Llama Stack
in older trees) as the library client the tree itself configures, with SQLite
storage in a temporary folder. What is fake: the LLM, a small
OpenAI-compatible server on 127.0.0.1 (:mod:`.fake_llm`) that OGX calls.

The adapter observes through public boundaries only: HTTP responses and SSE
events, the conversation items OGX returns, and what the fake LLM was sent.
The tree's own constants (the marker sentinel) and token counter are read from
its modules, never patched.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import importlib.util
import inspect
import os
import re
import shutil
import sqlite3
import tempfile
import time
import uuid
from collections.abc import Callable, Coroutine, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, TypeVar

from ctxaudit.outcomes import CouldNotCheck, injected, observing
from ctxaudit.targets.lightspeed import service_config, streaming
from ctxaudit.targets.lightspeed.clock import SteppingClock
from ctxaudit.targets.lightspeed.fake_llm import MODEL_ID, Call, FakeLLM, Reply
from ctxaudit.targets.lightspeed.ogx_items import MAX_PAGES, iter_items
from ctxaudit.targets.lightspeed.service_config import INSTRUCTIONS, PROVIDER_ID
from ctxaudit.targets.lightspeed.streaming import STOP_SETTLE, SlowAck

__all__ = [  # what the suites and the targets' other modules name through the harness
    "INSTRUCTIONS",
    "MAX_PAGES",
    "MODEL_ID",
    "PROVIDER_ID",
    "RunConfig",
    "Service",
    "STOP_SETTLE",
    "SteppingClock",
    "iter_items",
    "summarize",
]

if TYPE_CHECKING:
    from ctxaudit.targets.lightspeed.wire import ItemView, Response

# The HTTP side (``wire``, ``a2a_client``: httpx) is imported where a running service
# uses it, so that :func:`iter_items` is importable, and tested, outside a tree's
# environment (ctxaudit's own has no httpx).

T = TypeVar("T")
TAG = re.compile(r"\bq\d+\b")


@dataclass(frozen=True)
class RunConfig:
    """The compaction configuration a request is served under (``Service.configure``)."""

    window: int = 400
    ratio: float = 0.5
    floor: int = 0
    buffer: int = 1
    #: the kept turns' cap, a share of ``window`` (the tree's degrading guard)
    buffer_ratio: float = 1.0

    @property
    def limit(self) -> float:
        return max(self.ratio * self.window, self.floor)


def summarize(texts: Sequence[str]) -> str:
    """What the fake LLM answers to a summarization request.

    A deterministic function of the transcript: the request tags (``q12``) it
    names, in order. The reference model applies the same function to the
    items it folds, so it predicts every marker's text exactly.
    """
    tags = [tag for text in texts for tag in TAG.findall(text)]
    return "summary of " + ",".join(tags) if tags else "summary of nothing"


class Service:
    """The tree's app, OGX and the fake LLM, started once; requests go through HTTP."""

    def __init__(self, config: RunConfig, script: Callable[[Call], Reply]) -> None:
        self.config = config
        self._script = script
        self.folder = Path(tempfile.mkdtemp(prefix="ctxaudit-lightspeed-"))
        self.llm = FakeLLM(self._answer)
        self.loop = asyncio.new_event_loop()
        self._lifespan: AbstractAsyncContextManager[Any] | None = None
        self.boot_seconds = 0.0

    # -- the fake LLM's answers -------------------------------------------------

    def _answer(self, body: dict[str, Any]) -> Reply:
        call = Call(body, Reply())
        system = " ".join(call.texts("system"))
        users = call.texts("user")
        if "topic summar" in system:
            return Reply(("topic",))
        if "ummariz" in system and users and users[-1].startswith("Conversation:"):
            return Reply((summarize(users[-1].splitlines()[1:]),))
        return self._script(call)

    # -- start and stop ----------------------------------------------------------

    def start(self) -> Service:
        """Boot the tree's app (its lifespan), OGX and the fake LLM. A tree that does not
        start on its environment (its app does not import, its lifespan fails) is one
        ctxaudit cannot drive: CouldNotCheck, although the error arose in the tree's code,
        and whatever the start had set up is undone."""
        try:
            return self._start()
        except Exception as exc:
            self._abandon()
            if isinstance(exc, CouldNotCheck):
                raise
            why = f"the tree's service did not start: {type(exc).__name__}: {exc}"
            raise CouldNotCheck(why) from exc

    def _abandon(self) -> None:
        """Undo what a start that failed had set up, each step on its own."""
        steps: list[Callable[[], object]] = []
        if self._lifespan is not None:
            lifespan, self._lifespan = self._lifespan, None
            steps.append(lambda: self.run(lifespan.__aexit__(None, None, None)))
        steps += [self.loop.close, self.llm.stop]
        if getattr(self, "clock", None) is not None:
            steps.append(self.clock.remove)
        steps.append(lambda: shutil.rmtree(self.folder, ignore_errors=True))
        for step in steps:
            with contextlib.suppress(Exception):
                step()

    def _start(self) -> Service:
        started = time.monotonic()
        self.clock = SteppingClock()
        self.clock.install()
        self.llm.start()
        ogx_dir = self.folder / "ogx"
        ogx_dir.mkdir()
        run_yaml = self.folder / "run.yaml"
        package = "ogx" if _has_module("ogx.core.library_client") else "llama_stack"
        run_yaml.write_text(service_config.run_yaml(ogx_dir, self.llm.base_url, package))
        self._run_yaml = run_yaml
        service_yaml = self._write_service_yaml(self.config)
        os.environ["LIGHTSPEED_STACK_CONFIG_PATH"] = str(service_yaml)
        os.environ.setdefault("OTEL_ANONYMIZATION_SECRET", "ctxaudit")
        configuration = importlib.import_module("configuration").configuration
        configuration.load_configuration(str(service_yaml))
        self.app = importlib.import_module("app.main").app
        import httpx

        from ctxaudit.targets.lightspeed.wire import StreamingASGITransport

        self._lifespan = self.app.router.lifespan_context(self.app)
        self.run(self._lifespan.__aenter__())
        self.http = httpx.AsyncClient(
            transport=StreamingASGITransport(self.app), base_url="http://lightspeed", timeout=60
        )
        holder = importlib.import_module("client")
        holder_class = next(
            getattr(holder, name) for name in dir(holder) if name.endswith("ClientHolder")
        )
        self.ogx = holder_class().get_client()
        self._inject_write_faults()
        compaction = importlib.import_module("utils.conversation_compaction")
        self.sentinel: str = compaction.MARKER_SENTINEL
        notice = getattr(importlib.import_module("constants"), "INTERRUPTED_RESPONSE_MESSAGE", "")
        #: what the tree appends to an interrupted answer it stores
        self.interrupted_suffix = f"\n\n*{notice}*" if notice else ""
        #: the answer to an input the tree's own check refuses ("" where it has none)
        self.refusal: str = (
            getattr(importlib.import_module("constants"), "OBFUSCATION_REJECTION_MESSAGE", "")
            if _has_module("utils.input_sanitization")
            else ""
        )
        estimator = importlib.import_module("utils.token_estimator")
        self._count_text: Callable[[str], int] = estimator.estimate_tokens
        self._count_items: Callable[[list[Any]], int] = estimator.estimate_conversation_tokens
        self.boot_seconds = time.monotonic() - started
        return self

    def serves(self, path: str, method: str = "POST") -> bool:
        """The app routes ``method path`` to an endpoint: Starlette's own matching of a
        request scope, which every route type implements (routers nest differently
        across FastAPI versions: 0.141 keeps an included router as one route). No
        handler runs. Not the OpenAPI document: building it took 1.6 s of every start.

        A route that cannot be matched is ctxaudit's failure to read the app, never a
        finding about the tree: :class:`CouldNotCheck`."""
        from starlette.routing import Match

        scope = {"type": "http", "path": path, "method": method, "root_path": "",
                 "headers": [], "query_string": b""}  # fmt: skip
        try:
            return any(
                route.matches(scope)[0] is not Match.NONE for route in self.app.router.routes
            )
        except Exception as exc:
            why = (
                f"could not read the app's routes for {method} {path}: {type(exc).__name__}: {exc}"
            )
            raise CouldNotCheck(why) from exc

    def _write_service_yaml(self, config: RunConfig) -> Path:
        path = self.folder / "lightspeed-stack.yaml"
        path.write_text(service_config.service_yaml(self.folder, self._run_yaml, config))
        return path

    def configure(self, config: RunConfig) -> None:
        """Serve the next requests under ``config``: the tree reads its configuration
        file again, as the operator's change of it and a restart would have it read.

        Every tree reads the compaction settings and the context windows from its
        ``configuration`` at each request, so the app, OGX and the stored conversations
        stay as they are; nothing else in the file changes.
        """
        if config == self.config:
            return
        path = self._write_service_yaml(config)
        try:
            importlib.import_module("configuration").configuration.load_configuration(str(path))
        except Exception as exc:  # a tree that refuses the harness's file: no verdict
            why = f"the tree did not take the configuration {config}: {type(exc).__name__}: {exc}"
            raise CouldNotCheck(why) from exc
        self.config = config

    def _inject_write_faults(self) -> None:
        """Let a test make the tree's own conversation writes fail (S7).

        The tree writes the turns the server does not store through the OGX
        client's public ``conversations.items.create``; while
        :attr:`writes_fail` is set, each such call fails as a locked SQLite
        store would. OGX's own writes (a turn it stores itself) do not pass
        through the client and are never failed.
        """
        self.writes_fail = False
        self.failed_writes = 0
        self.slow_ack: SlowAck | None = None
        items = self.ogx.conversations.items
        create = items.create

        async def create_or_fail(*args: Any, **kwargs: Any) -> Any:
            if self.writes_fail:
                self.failed_writes += 1
                raise injected(sqlite3.OperationalError("database is locked (ctxaudit: injected)"))
            created = create(*args, **kwargs)  # the client's own shape, awaited or not
            result = await created if inspect.isawaitable(created) else created
            slow, self.slow_ack = self.slow_ack, None
            if slow is not None:  # stored; its acknowledgement is on its way
                slow.stored.set()
                await slow.acknowledged.wait()
            return result

        items.create = create_or_fail

    def stop(self) -> None:
        if self._lifespan is not None:
            self.run(self.http.aclose())
            self.run(self._lifespan.__aexit__(None, None, None))
            self._lifespan = None
        self.loop.close()
        self.llm.stop()
        self.clock.remove()
        shutil.rmtree(self.folder, ignore_errors=True)

    def run(self, awaitable: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(awaitable)

    # -- the target's token counter (an input of the model, docs/properties.md section 3)

    def count_text(self, text: str) -> int:
        return self._count_text(text)

    def count_messages(self, messages: Sequence[tuple[str, str]]) -> int:
        items = [
            SimpleNamespace(type="message", role=role, content=text) for role, text in messages
        ]
        return self._count_items(items)

    # -- requests ----------------------------------------------------------------

    async def _post_json(self, path: str, payload: dict[str, Any]) -> Response:
        from ctxaudit.targets.lightspeed.wire import Response

        reply = await self.http.post(path, json=payload)
        try:
            body = reply.json()
        except ValueError:
            body = reply.text
        return Response(status=reply.status_code, body=body)

    def query(self, text: str, conversation: str | None) -> Response:
        payload: dict[str, Any] = {"query": text, "generate_topic_summary": False}
        if conversation:
            payload["conversation_id"] = conversation
        response = self.run(self._post_json("/v1/query", payload))
        if response.status == 200 and isinstance(response.body, dict):
            response.answer = response.body.get("response", "")
            response.conversation = response.body.get("conversation_id")
        return response

    def responses(
        self,
        value: str | list[dict[str, Any]],
        conversation: str | None,
        *,
        store: bool = True,
        previous_response_id: str | None = None,
    ) -> Response:
        payload: dict[str, Any] = {
            "input": value,
            "store": store,
            "stream": False,
            "generate_topic_summary": False,
        }
        if conversation:
            payload["conversation"] = conversation
        if previous_response_id:
            payload["previous_response_id"] = previous_response_id
        response = self.run(self._post_json("/v1/responses", payload))
        if response.status == 200 and isinstance(response.body, dict):
            from ctxaudit.targets.lightspeed.wire import output_text

            response.answer = output_text(response.body.get("output") or [])
            response.conversation = response.body.get("conversation")
            response.response_id = response.body.get("id")
        return response

    def a2a(
        self, text: str, context: str | None, conversation: str | None, *, stream: bool = False
    ) -> Response:
        """One A2A message in ``context`` (``message/stream`` or ``message/send``).

        With no context but a ``conversation`` (one started on another path), a
        new context is mapped to it first (:func:`.a2a_client.link`); with
        neither, the tree starts a conversation for a new context.
        """
        from ctxaudit.targets.lightspeed import a2a_client

        if context is None and conversation:
            context = str(uuid.uuid4())
            self.run(a2a_client.link(context, conversation))
        return self.run(a2a_client.send(self, text, context, stream=stream))

    def stream(
        self,
        path: str,
        payload: dict[str, Any],
        *,
        stop_after: int | None = None,
        interrupt: bool = False,
        interrupt_while_storing: bool = False,
    ) -> Response:
        """POST to a streaming endpoint and read its SSE events.

        ``stop_after``: stop reading after that many text deltas, either by
        the tree's interrupt endpoint (``interrupt``) or by closing the
        connection (a client that stops reading). The fake LLM then holds the
        rest of the answer (:meth:`.FakeLLM.hold`) until the stop is done and
        the app's request has ended, so the app never sees more of the answer
        than it was sent before the stop, however slow the machine.

        ``interrupt_while_storing``, with a hang-up: the client also calls the
        interrupt endpoint (a browser's stop button closes the connection and
        sends the interrupt), and it arrives while the tree stores the turn cut
        short: the tree's first conversation write after the hang-up is stored,
        and its acknowledgement held until the interrupt has been answered.
        """
        if stop_after is None:
            return self.run(streaming.read_stream(self, path, payload, stop_after, interrupt))
        self.llm.hold(stop_after)
        try:
            if interrupt_while_storing:
                return self.run(streaming.hang_up_then_interrupt(self, path, payload, stop_after))
            return self.run(streaming.read_stream(self, path, payload, stop_after, interrupt))
        finally:
            self.llm.release()

    # -- what OGX holds ------------------------------------------------------------

    def items(self, conversation: str) -> list[ItemView]:
        return self.run(self._items(conversation))

    async def _items(self, conversation: str) -> list[ItemView]:
        conv = conversation if conversation.startswith("conv_") else f"conv_{conversation}"

        def page_after(cursor: str) -> Any:
            return self.ogx.conversations.items.list(conv, order="asc", limit=100, after=cursor)

        with observing("conversation items"):
            listing = self.ogx.conversations.items.list(conv, order="asc", limit=100)
            return [self._view(item) for item in await iter_items(listing, page_after)]

    def _view(self, item: Any) -> ItemView:
        from ctxaudit.targets.lightspeed.wire import ItemView, content_text

        if item.type != "message":
            return ItemView(str(item.type), "", "")
        role = str(getattr(item, "role", ""))
        text = content_text(getattr(item, "content", None))
        if text.startswith(self.sentinel):
            return ItemView("summary", role, text[len(self.sentinel) :].strip())
        if self.interrupted_suffix and text.endswith(self.interrupted_suffix):
            text = text[: -len(self.interrupted_suffix)]  # the tree's own notice
        return ItemView("input" if role == "user" else "output", role, text)


def _has_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False
