"""Drive openai-agents' sessions as an application does, and read what they did.

Runs inside an openai-agents environment (:mod:`ctxaudit.targets.openai_agents.tree`).
Only the LLM is faked: the SDK's own ``OpenAIResponsesModel`` (the agent's model is the
plain name ``"gpt-4.1"``) and the compaction session's ``client.responses.compact`` both
talk to :class:`~ctxaudit.targets.openai_agents.server.FakeResponses` through a real
``AsyncOpenAI`` client. The store is a real ``SQLiteSession`` (in memory), wrapped in a
real ``OpenAIResponsesCompactionSession``.

What is observed is public: the server's record of every request, the stored rows
(``SQLiteSession.get_items`` with a limit above their number, so the retrieval window
hides none), what ``Runner.run`` and ``run_compaction`` return or raise, what each
session writer (``add_items``, ``pop_item``, ``clear_session``, through the compaction
session or on the store itself) returned. Each run gets a new compaction session over
the same store, as an application that builds one per request does; the decision hook,
when the suite passes one, is the documented ``should_trigger_compaction`` over
``compaction_candidate_items``.

A write can be made while a compact call is in flight (:class:`Write`, ``during=``):
the fake server holds the call, the write is started, and the call is released once
the write reached the store or is waiting for the compaction session (whose mutation
lock, where the release has one, queues it behind the compaction). Which of the two
happened is decided by the store having been entered, never by a timer.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from agents import (
    Agent,
    ModelSettings,
    Runner,
    SQLiteSession,
    function_tool,
    set_default_openai_client,
    set_tracing_disabled,
)
from agents.memory import OpenAIResponsesCompactionSession
from openai import AsyncOpenAI

from ctxaudit.outcomes import CouldNotCheck, could_not_check, observing
from ctxaudit.targets.openai_agents.server import Call, FakeResponses, Reply, Text, labels

ALL = 1_000_000  # a limit above any number of rows the suites store
_sessions = itertools.count()


def has_session_settings() -> bool:
    """The release documents ``SessionSettings`` (the store's retrieval default): 0.22.x on."""
    import agents.memory

    return hasattr(agents.memory, "SessionSettings")


def documents_suffix() -> bool:
    """The release documents automatic compaction of "a bounded, model-visible suffix"
    (0.23.1 on), rather than "Compaction clears and rewrites the session history"."""
    doc = " ".join((OpenAIResponsesCompactionSession.__doc__ or "").split())
    return "model-visible suffix" in doc


def has_rollback_budget() -> bool:
    params = inspect.signature(OpenAIResponsesCompactionSession.__init__).parameters
    return "max_rollback_items" in params


def _echo(tag: str) -> str:
    """Answer ``r`` and the tag it was given."""
    return f"r{tag}"


echo = function_tool(_echo, name_override="echo")  # its output names the call


def tool_call(tag: str) -> Call:
    return Call("echo", json.dumps({"tag": tag}))


@dataclass(frozen=True)
class Write:
    """One session write: ``add`` (``items``), ``pop`` or ``clear``, through the
    compaction session (``via="wrapper"``) or on the store itself (``via="store"``,
    another writer of the same session)."""

    op: Literal["add", "pop", "clear"]
    via: Literal["wrapper", "store"]
    items: tuple[tuple[str, str], ...] = ()  # (role, text) of each item added

    def dicts(self) -> list[dict[str, Any]]:
        return [{"role": role, "content": text} for role, text in self.items]


@dataclass
class Outcome:
    """What one run or manual compaction did, as its caller and the server saw it."""

    answer: Any = None  # the run's final output
    raised: BaseException | None = None
    model_inputs: list[list[str]] = field(default_factory=list)  # each /responses input
    compacts: list[dict[str, Any]] = field(default_factory=list)  # each compact body
    #: the write made while the compact call was in flight: None (no compact call came,
    #: so nothing was written), "landed" (it reached the store before the call was
    #: released) or "queued" (it waited for the compaction session and ran after)
    during: Literal["landed", "queued"] | None = None
    popped: str | None = None  # what that write's pop returned (a label), if it popped
    during_raised: BaseException | None = None


def count_writes(store: SQLiteSession) -> SQLiteSession:
    """``store`` with a count of the writes entering it (``store.entered``), so that a
    write started while a compact call is held is known to have reached the store, or
    not. The methods are wrapped on the instance: a subclass would not be the native
    ``SQLiteSession`` whose atomic suffix replacement 0.23.1 on uses."""
    store.entered = 0
    for name in ("add_items", "pop_item", "clear_session"):
        method = getattr(store, name)

        async def counted(*args: Any, _method: Any = method) -> Any:
            store.entered += 1
            return await _method(*args)

        setattr(store, name, counted)
    return store


#: event-loop turns a started write gets to reach the store before it is taken as
#: queued: a write that is not waiting on a lock enters the store on its first turn
YIELDS = 20


class Rig:
    """One conversation: a fake server, a client pointed at it, one SQLite store."""

    def __init__(self, window: int | None, threshold: int | None, store: bool = True) -> None:
        self.fake = FakeResponses()
        self.client = AsyncOpenAI(base_url=self.fake.base_url, api_key="x", max_retries=0)
        set_tracing_disabled(True)
        set_default_openai_client(self.client, use_for_tracing=False)
        self.session_id = f"ctxaudit-{next(_sessions)}"
        if window is not None:
            from agents.memory import SessionSettings

            self.store = SQLiteSession(
                self.session_id, session_settings=SessionSettings(limit=window)
            )
        else:
            self.store = SQLiteSession(self.session_id)
        count_writes(self.store)
        self.threshold = threshold
        self.late_written = False  # the last run's or compaction's write was made
        self.loop = asyncio.new_event_loop()
        settings = ModelSettings() if store else ModelSettings(store=False)
        self.agent = Agent("ctxaudit", model="gpt-4.1", tools=[echo], model_settings=settings)

    def close(self) -> None:
        self.loop.run_until_complete(self.client.close())
        self.loop.close()
        self.fake.close()
        self.store.close()

    def hook(self) -> Callable[[dict[str, Any]], bool] | None:
        if self.threshold is None:
            return None  # the documented default
        threshold = self.threshold
        return lambda ctx: len(ctx["compaction_candidate_items"]) >= threshold

    def wrapper(self) -> OpenAIResponsesCompactionSession:
        hook = self.hook()
        kw: dict[str, Any] = {} if hook is None else {"should_trigger_compaction": hook}
        return OpenAIResponsesCompactionSession(
            self.session_id, self.store, client=self.client, model="gpt-4.1", **kw
        )

    def stored(self) -> list[str]:
        with observing("the stored rows"):
            return labels(self.loop.run_until_complete(self.store.get_items(limit=ALL)))

    def _outcome(self, out: Outcome, requests: int) -> Outcome:
        """``out`` with what the server saw; ctxaudit's own errors (the fake's, or one
        raised in our code inside the run: the hook, the tool) are never the target's."""
        if self.fake.errors:
            raise CouldNotCheck(f"the fake Responses server failed: {self.fake.errors[0]}")
        why = could_not_check(out.raised) if out.raised is not None else None
        if why is not None:
            raise CouldNotCheck(f"the run raised in ctxaudit's own code: {why}") from out.raised
        return self._since(out, requests)

    def add(self, items: list[dict[str, Any]]) -> None:
        """Another writer appends to the store (not through a compaction session)."""
        self.loop.run_until_complete(self.store.add_items(items))

    def _since(self, out: Outcome, requests: int) -> Outcome:
        for path, body in self.fake.requests[requests:]:
            if path.endswith("/responses/compact"):
                out.compacts.append(body)
            elif path.endswith("/responses"):
                raw = body.get("input")
                items = [{"role": "user", "content": raw}] if isinstance(raw, str) else raw or []
                out.model_inputs.append(labels(items))
        return out

    def compacted(self, body: dict[str, Any]) -> list[str] | None:
        """What a compact request covered, as labels (None: it named a response the
        server never stored)."""
        history = self.fake.compacted_history(body)
        return None if history is None else labels(history)

    def write(self, write: Write, session: Any = None) -> str | None:
        """One write with no compaction in flight; what a pop returned, as a label."""
        return self.loop.run_until_complete(self._write(write, session or self.wrapper()))

    async def _write(self, write: Write, session: Any) -> str | None:
        target = session if write.via == "wrapper" else self.store
        if write.op == "add":
            await target.add_items(write.dicts())
        elif write.op == "clear":
            await target.clear_session()
        else:
            item = await target.pop_item()
            return None if item is None else labels([item])[0]
        return None

    def _during(self, out: Outcome, session: Any, main: Any, write: Write | None) -> Any:
        """Await ``main`` (a run or a manual compaction); with ``write``, make it while
        the compact call is held (none is made when no compact call comes)."""

        async def go() -> Any:
            if write is None:
                return await main
            self.fake.hold, self.fake.compact_seen = threading.Event(), threading.Event()
            task = asyncio.ensure_future(main)
            seen = asyncio.ensure_future(asyncio.to_thread(self.fake.compact_seen.wait))
            pending: asyncio.Future[Any] | None = None
            try:
                await asyncio.wait({task, seen}, return_when=asyncio.FIRST_COMPLETED)
                if seen.done():  # the compact call is held: write now
                    store = self.store
                    before = getattr(store, "entered", 0)
                    pending = asyncio.ensure_future(self._write(write, session))
                    for _ in range(YIELDS):
                        if pending.done() or getattr(store, "entered", 0) > before:
                            break
                        await asyncio.sleep(0)
                    if pending.done() or getattr(store, "entered", 0) > before:
                        out.during = "landed"
                        await asyncio.wait({pending})
                    else:
                        out.during = "queued"
            finally:
                self.fake.hold.set()
                self.fake.compact_seen.set()  # frees the waiting thread either way
                self.fake.hold = None
            await seen
            try:
                return await task
            finally:
                if pending is not None:
                    await asyncio.wait({pending})
                    if pending.exception() is not None:
                        out.during_raised = pending.exception()
                    else:
                        out.popped = pending.result()

        return self.loop.run_until_complete(go())

    def run(
        self,
        text: str,
        replies: list[Reply],
        compact_fails: bool = False,
        late: list[dict[str, Any]] | None = None,
        during: Write | None = None,
    ) -> Outcome:
        """``Runner.run(agent, text, session=...)`` with the model's replies scripted.

        ``during``: a write made while the compact call is in flight, through the
        run's compaction session or on the store (:meth:`_during`); ``late``: items
        another writer appends then (a store ``add``). When no compact call comes,
        nothing is written and :attr:`late_written` stays False."""
        if late is not None:
            items = tuple((i["role"], i["content"]) for i in late)
            during = Write("add", "store", items)
        self.fake.script = list(replies)
        self.fake.compact_status = 500 if compact_fails else 200
        start = len(self.fake.requests)
        out = Outcome()
        session = self.wrapper()
        try:
            main = Runner.run(self.agent, text, session=session)
            out.answer = self._during(out, session, main, during).final_output
        except Exception as exc:  # what the run raised, judged by the suite
            out.raised = exc
        finally:
            self.fake.compact_status = 200
        self.late_written = out.during is not None
        return self._outcome(out, start)

    def compact(
        self, force: bool, compact_fails: bool = False, during: Write | None = None
    ) -> Outcome:
        """A manual ``run_compaction`` on a new compaction session over the store;
        ``during``: a write made while its compact call is in flight."""
        self.fake.compact_status = 500 if compact_fails else 200
        start = len(self.fake.requests)
        out = Outcome()
        session = self.wrapper()
        try:
            args: dict[str, Any] = {"force": True} if force else {}
            out.answer = self._during(out, session, session.run_compaction(args), during)
        except Exception as exc:
            out.raised = exc
        finally:
            self.fake.compact_status = 200
        self.late_written = out.during is not None
        return self._outcome(out, start)


__all__ = ["Call", "Outcome", "Rig", "Text", "Write", "tool_call"]
