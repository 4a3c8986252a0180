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
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, TypeVar

from ctxaudit.outcomes import CouldNotCheck, injected, observing
from ctxaudit.targets.lightspeed.fake_llm import MODEL_ID, Call, FakeLLM, Reply

if TYPE_CHECKING:
    from ctxaudit.targets.lightspeed.wire import ItemView, Response

# The HTTP side (``wire``, ``a2a_client``: httpx) is imported where a running service
# uses it, so that :func:`iter_items` is importable, and tested, outside a tree's
# environment (ctxaudit's own has no httpx).

T = TypeVar("T")
PROVIDER_ID = "fake"
INSTRUCTIONS = "You are the ctxaudit test assistant."
TAG = re.compile(r"\bq\d+\b")
#: seconds a stopped stream may take to end (its interrupt acted on): a bound that
#: only turns a stuck run into CouldNotCheck, never a verdict
STOP_SETTLE = 30.0


@dataclass
class _SlowAck:
    """A conversation write whose acknowledgement the harness holds: ``stored`` is set
    once the write is stored, and the write returns once ``acknowledged`` is set."""

    stored: asyncio.Event = field(default_factory=asyncio.Event)
    acknowledged: asyncio.Event = field(default_factory=asyncio.Event)
    #: the stream the client stopped
    request_id: str | None = None


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


def _run_yaml(ogx_dir: Path, llm_url: str, package: str) -> str:
    """OGX's run configuration: the fake LLM as its only inference provider.

    ``package`` is ``ogx`` (OGX 1.x: a ``responses`` API, builtin provider) or
    ``llama_stack`` (Llama Stack 0.6: responses are part of ``agents``).
    """
    if package == "ogx":
        apis = "[inference, responses, conversations, files, tool_runtime, vector_io]"
        responses = """\
  responses:
  - provider_id: builtin
    provider_type: inline::builtin
    config:
      persistence:
        responses: {table_name: agents_responses, backend: sql_default}
"""
    else:
        apis = "[agents, inference, files, safety, tool_runtime, vector_io]"
        responses = """\
  safety: []
  agents:
  - provider_id: meta-reference
    provider_type: inline::meta-reference
    config:
      persistence:
        agent_state: {namespace: agents_state, backend: kv_default}
        responses: {table_name: agents_responses, backend: sql_default}
"""
    return f"""\
version: 2
distro_name: ctxaudit
image_name: ctxaudit
apis: {apis}
providers:
  inference:
  - provider_id: {PROVIDER_ID}
    provider_type: remote::openai
    config: {{api_key: not-used, base_url: "{llm_url}"}}
  files:
  - provider_id: localfs
    provider_type: inline::localfs
    config:
      metadata_store: {{table_name: files_metadata, backend: sql_default}}
      storage_dir: "{ogx_dir}/files"
  tool_runtime: []
  vector_io: []
{responses}storage:
  backends:
    kv_default: {{type: kv_sqlite, db_path: "{ogx_dir}/kv.db"}}
    sql_default: {{type: sql_sqlite, db_path: "{ogx_dir}/sql.db"}}
  stores:
    metadata: {{namespace: registry, backend: kv_default}}
    inference: {{table_name: inference_store, backend: sql_default}}
    conversations: {{table_name: openai_conversations, backend: sql_default}}
registered_resources:
  models:
  - {{model_id: {MODEL_ID}, provider_id: {PROVIDER_ID}, provider_model_id: {MODEL_ID}, \
model_type: llm}}
"""


def _service_yaml(folder: Path, run_yaml: Path, config: RunConfig) -> str:
    return f"""\
name: ctxaudit-target
service: {{host: 127.0.0.1, port: 8080, auth_enabled: false, workers: 1, \
color_log: false, access_log: false}}
llama_stack:
  use_as_library_client: true
  library_client_config_path: "{run_yaml}"
user_data_collection: {{feedback_enabled: false, transcripts_enabled: false}}
authentication: {{module: noop}}
database:
  sqlite: {{db_path: "{folder}/lightspeed.db"}}
customization:
  system_prompt: "{INSTRUCTIONS}"
  agent_card_config: {{name: ctxaudit-target, description: ctxaudit, skills: [], security: []}}
inference:
  default_model: {MODEL_ID}
  default_provider: {PROVIDER_ID}
  context_windows: {{{PROVIDER_ID}/{MODEL_ID}: {config.window}}}
compaction:
  enabled: true
  threshold_ratio: {config.ratio}
  token_floor: {config.floor}
  buffer_turns: {config.buffer}
  buffer_max_ratio: {config.buffer_ratio}
"""


class SteppingClock:
    """``time.time`` that moves on by :attr:`STEP` seconds at every reading.

    OGX stamps each stored conversation item with ``int(time.time()) + i``
    (``i`` its place in the write) and lists items ordered by that stamp. Two
    writes in the same second (a summary marker and the turn after it; two
    turns when the fake LLM answers at once) get equal stamps, and the listing
    interleaves them. A real LLM takes seconds, so the suite makes the clock
    take them instead: every reading is at least ``STEP`` seconds after the
    previous one, and writes of up to ``STEP`` items never share a stamp. The
    monotonic clock (timeouts, asyncio) is untouched.
    """

    STEP = 10.0

    def __init__(self) -> None:
        self.readings = 0
        self._real = time.time

    def __call__(self) -> float:
        self.readings += 1
        return self._real() + self.STEP * self.readings

    def install(self) -> None:
        time.time = self

    def remove(self) -> None:
        time.time = self._real


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
        run_yaml.write_text(_run_yaml(ogx_dir, self.llm.base_url, package))
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
        #: the app's endpoints, as its OpenAPI document lists them (routers nest
        #: differently across FastAPI versions; the document is the public view)
        self.paths: set[str] = set(self.app.openapi().get("paths", {}))
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

    def _write_service_yaml(self, config: RunConfig) -> Path:
        path = self.folder / "lightspeed-stack.yaml"
        path.write_text(_service_yaml(self.folder, self._run_yaml, config))
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
        self._slow_ack: _SlowAck | None = None
        items = self.ogx.conversations.items
        create = items.create

        async def create_or_fail(*args: Any, **kwargs: Any) -> Any:
            if self.writes_fail:
                self.failed_writes += 1
                raise injected(sqlite3.OperationalError("database is locked (ctxaudit: injected)"))
            created = create(*args, **kwargs)  # the client's own shape, awaited or not
            result = await created if inspect.isawaitable(created) else created
            slow, self._slow_ack = self._slow_ack, None
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
            return self.run(self._stream(path, payload, stop_after, interrupt))
        self.llm.hold(stop_after)
        try:
            if interrupt_while_storing:
                return self.run(self._hang_up_then_interrupt(path, payload, stop_after))
            return self.run(self._stream(path, payload, stop_after, interrupt))
        finally:
            self.llm.release()

    async def _hang_up_then_interrupt(
        self, path: str, payload: dict[str, Any], stop_after: int
    ) -> Response:
        """A hang-up whose interrupt reaches the tree while it stores the turn: sent
        once the tree's first write after the hang-up is stored, whose acknowledgement
        is released once the interrupt is answered. A tree that stores nothing gets
        no interrupt."""
        slow = _SlowAck()

        async def interrupt_when_stored() -> tuple[int, set[asyncio.Task[Any]]]:
            """The interrupt's status, and the tasks the app started while answering it
            (the interrupt callback's, which stores the turn on its own)."""
            try:
                await slow.stored.wait()
                if not slow.request_id:
                    raise CouldNotCheck("the stream named no request id to interrupt")
                before = asyncio.all_tasks()
                stop = await self.http.post(
                    "/v1/streaming_query/interrupt", json={"request_id": slow.request_id}
                )
                return int(stop.status_code), asyncio.all_tasks() - before
            finally:
                slow.acknowledged.set()

        interrupter = asyncio.get_running_loop().create_task(interrupt_when_stored())
        try:
            response = await self._stream(path, payload, stop_after, False, slow)
        finally:
            self._slow_ack = None
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

    async def _stream(
        self,
        path: str,
        payload: dict[str, Any],
        stop_after: int | None,
        interrupt: bool,
        slow: _SlowAck | None = None,
    ) -> Response:
        from ctxaudit.targets.lightspeed.wire import Response, absorb, sse

        response = Response(status=0)
        deltas = 0
        async with self.http.stream("POST", path, json=payload) as reply:
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
                        self._slow_ack = slow
                    break  # the client hangs up; the app sees a disconnect
                stop = await self.http.post(
                    "/v1/streaming_query/interrupt", json={"request_id": response.request_id}
                )
                response.interrupt_status = stop.status_code
                if stop.status_code != 200:
                    self.llm.release()  # not interrupted: the rest of the answer comes
                    continue
                await _read_on(events, response)
                break
        return response

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


#: pages :func:`iter_items` follows at most (100 items a page: far past any conversation
#: a test builds); a listing that goes on is a client the harness does not understand
MAX_PAGES = 1000


async def iter_items(listing: Any, page_after: Callable[[str], Any]) -> list[Any]:
    """Every item of a conversation, from what the OGX client's ``items.list`` returned.

    The shapes a client returns, each seen in a client the trees use or may use:

    - an async iterator: llama-stack-client 0.6 and ogx-client 1.0-1.1 return an
      ``AsyncPaginator``, which pages through ``has_more`` and ``after=`` by itself
      (it is awaitable too; iterating it is what follows the pages);
    - an awaitable (a coroutine) that returns one of these shapes;
    - a page: ``data`` (a list of items), ``has_more`` and, when more follow, the
      cursor of the next page: ``last_id`` (ogx-client's ``OpenAICursorPage``) or else
      the id of the page's last item; ``page_after(cursor)`` asks for that page;
    - a sync iterable of items (a list; a sync client's auto-paginating page).

    Each item must carry a ``type``. Anything else raises :class:`CouldNotCheck`
    naming the shape: the harness cannot say what the conversation holds.
    """
    items: list[Any] = []
    cursors: set[str] = set()
    for _ in range(MAX_PAGES):
        if hasattr(listing, "__aiter__"):
            items += [item async for item in listing]
            return _checked(items)
        if inspect.isawaitable(listing):
            listing = await listing
            continue
        data = getattr(listing, "data", None)
        if isinstance(data, list | tuple):
            items += data
            if not getattr(listing, "has_more", False):
                return _checked(items)
            cursor = getattr(listing, "last_id", None) or (
                getattr(data[-1], "id", None) if data else None
            )
            if not isinstance(cursor, str) or not cursor:
                raise CouldNotCheck(
                    f"conversation items: a page ({_shape(listing)}) says more follow, "
                    "but names no cursor (no last_id, no id on its last item)"
                )
            if cursor in cursors:
                raise CouldNotCheck(
                    f"conversation items: the page after {cursor!r} was asked for twice"
                )
            cursors.add(cursor)
            listing = page_after(cursor)
            continue
        if isinstance(listing, Iterable) and not isinstance(listing, str | bytes | Mapping):
            items += list(listing)
            return _checked(items)
        raise CouldNotCheck(
            f"conversation items listed as {_shape(listing)}: not an async iterator, an "
            "awaitable, a page (data, has_more) or an iterable of items"
        )
    raise CouldNotCheck(f"conversation items: more than {MAX_PAGES} pages")


async def _read_on(events: AsyncIterator[dict[str, Any]], response: Response) -> None:
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


def _checked(items: list[Any]) -> list[Any]:
    for item in items:
        if not isinstance(getattr(item, "type", None), str):
            raise CouldNotCheck(f"a conversation item of shape {_shape(item)} has no type")
    return items


def _shape(value: Any) -> str:
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}"


def _has_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False
