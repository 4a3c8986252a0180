"""Drive openai-agents' sessions as an application does, and read what they did.

Runs inside an openai-agents environment (:mod:`ctxaudit.targets.openai_agents.tree`).
Only the LLM is faked: the SDK's own ``OpenAIResponsesModel`` (the agent's model is the
plain name ``"gpt-4.1"``) and the compaction session's ``client.responses.compact`` both
talk to :class:`~ctxaudit.targets.openai_agents.server.FakeResponses` through a real
``AsyncOpenAI`` client. The store is a real ``SQLiteSession`` (in memory), wrapped in a
real ``OpenAIResponsesCompactionSession``.

What is observed is public: the server's record of every request, the stored rows
(``SQLiteSession.get_items`` with a limit above their number, so the retrieval window
hides none), what ``Runner.run`` and ``run_compaction`` return or raise. Each run gets a
new compaction session over the same store, as an application that builds one per
request does; the decision hook, when the suite passes one, is the documented
``should_trigger_compaction`` over ``compaction_candidate_items``.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

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


@dataclass
class Outcome:
    """What one run or manual compaction did, as its caller and the server saw it."""

    answer: Any = None  # the run's final output
    raised: BaseException | None = None
    model_inputs: list[list[str]] = field(default_factory=list)  # each /responses input
    compacts: list[dict[str, Any]] = field(default_factory=list)  # each compact body


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
        self.threshold = threshold
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

    def run(
        self,
        text: str,
        replies: list[Reply],
        compact_fails: bool = False,
        late: list[dict[str, Any]] | None = None,
    ) -> Outcome:
        """``Runner.run(agent, text, session=...)`` with the model's replies scripted.

        ``late``: items another writer appends while the compact call is in flight
        (the server holds it until the append is stored). When no compact call comes,
        nothing is appended and :attr:`late_written` stays False."""
        self.fake.script = list(replies)
        self.fake.compact_status = 500 if compact_fails else 200
        start = len(self.fake.requests)
        out = Outcome()
        self.late_written = False
        session = self.wrapper()

        async def go() -> Any:
            if late is None:
                return await Runner.run(self.agent, text, session=session)
            self.fake.hold, self.fake.compact_seen = threading.Event(), threading.Event()
            run = asyncio.ensure_future(Runner.run(self.agent, text, session=session))
            seen = asyncio.ensure_future(asyncio.to_thread(self.fake.compact_seen.wait))
            try:
                await asyncio.wait({run, seen}, return_when=asyncio.FIRST_COMPLETED)
                if seen.done():  # the compact call is held: write now
                    await self.store.add_items(late)
                    self.late_written = True
            finally:
                self.fake.hold.set()
                self.fake.compact_seen.set()  # frees the waiting thread either way
                self.fake.hold = None
            await seen
            return await run

        try:
            out.answer = self.loop.run_until_complete(go()).final_output
        except Exception as exc:  # what the run raised, judged by the suite
            out.raised = exc
        finally:
            self.fake.compact_status = 200
        return self._outcome(out, start)

    def compact(self, force: bool, compact_fails: bool = False) -> Outcome:
        """A manual ``run_compaction`` on a new compaction session over the store."""
        self.fake.compact_status = 500 if compact_fails else 200
        start = len(self.fake.requests)
        out = Outcome()
        try:
            args: dict[str, Any] = {"force": True} if force else {}
            out.answer = self.loop.run_until_complete(self.wrapper().run_compaction(args))
        except Exception as exc:
            out.raised = exc
        finally:
            self.fake.compact_status = 200
        return self._outcome(out, start)


__all__ = ["Call", "Outcome", "Rig", "Text", "tool_call"]
