"""strands-agents as the restore concern's adapter (:mod:`ctxaudit.concerns.restore`): a
real ``Agent`` with a ``SummarizingConversationManager`` or a
``SlidingWindowConversationManager`` and a ``FileSessionManager`` over the run's folder,
called as its user calls it (``agent(prompt)``), only the model faked.

The faked model is a ``strands.models.Model`` (the documented extension point for a model
provider) that streams what the turn scripts: tool calls (the agent runs the one tool,
``lookup``, and adds the results as it does), then text; or first raises the
``ContextWindowOverflowException`` a provider raises when the window is full, so that the
agent reduces its conversation and calls again; or fails a call with a provider error
(the agent raises it, and the turn ends). Asked to summarize (the conversation ends
with the summarization request), it writes ``[sN]`` followed by the ids of the messages it
was sent. A restore is a new ``Agent`` with a new session manager over the same folder.
A tool may be running when the agent's process dies: the folder is copied as it is then,
and the next agent is built over that copy.

Runs inside a strands-agents environment.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("AWS_REGION", "us-east-1")  # the default model is never built or called

from strands import Agent, tool  # noqa: E402
from strands.agent.conversation_manager import (  # noqa: E402
    SlidingWindowConversationManager,
    SummarizingConversationManager,
)
from strands.models.model import Model  # noqa: E402
from strands.session.file_session_manager import FileSessionManager  # noqa: E402
from strands.types.exceptions import ContextWindowOverflowException  # noqa: E402
from strands.types.tools import ToolContext  # noqa: E402

from ctxaudit.concerns.restore import (  # noqa: E402
    ASKS,
    DIES,
    INVOCATION,
    MANAGERS,
    MESSAGE,
    OVERFLOW,
    PROVIDER_DOWN,
    REDACTION,
    REDUCTION,
    SUMMARIZING,
    SUMMARY_DOWN,
    WRITES,
    Block,
    Held,
    Observed,
    Settings,
    Turn,
    opening,
)
from ctxaudit.outcomes import CouldNotCheck, carries_injected, could_not_check, injected  # noqa: E402

#: the message strands' summarizer ends the conversation it sends with
ASK = "Please summarize this conversation."
ID = re.compile(r"^\[([a-z]\d+)\]")


class Died(BaseException):
    """The agent's process died while a tool ran: a ``BaseException``, as a kill is never
    an error the harness turns into a tool's result."""


@tool(context=True)  # type: ignore[untyped-decorator]
def lookup(key: str, tool_context: ToolContext) -> str:
    """Look a key up (the faked model's one tool): its result names the call it answers.
    A call the lockstep marks as a writer writes the agent's state, as a tool does; one it
    marks as asking interrupts the agent for the user's approval first (strands' interrupts,
    "human-in-the-loop"), and runs when the user answers; in one it marks as dying, the
    agent's process dies (the storage is kept as it is at that moment)."""
    if key.startswith(DIES):
        tool_context.agent.model.die()
        raise Died(key)
    if key.startswith(ASKS):
        tool_context.interrupt("approve", reason=key)
    if key.startswith(WRITES):
        state = tool_context.agent.state
        state.set("last", key)
        state.set("writes", (state.get("writes") or 0) + 1)
    return f"[r-{key}]"


def ids_of(message: dict[str, Any]) -> list[str]:
    """The ids a message carries: its text's, its calls', its results'."""
    out = []
    for block in message.get("content", []):
        if "text" in block and (m := ID.match(block["text"])):
            out.append(m.group(1))
        elif "toolUse" in block:
            out.append(block["toolUse"]["toolUseId"])
        elif "toolResult" in block:
            out.append("r-" + block["toolResult"]["toolUseId"])
    return out


class ScriptedModel(Model):
    """A model provider that answers as the lockstep scripts."""

    #: the window it declares; a call the turn marks full is counted over it
    WINDOW = 1000

    def __init__(self) -> None:
        self.replies: list[Any] = []  # what each next call answers: calls, text, OVERFLOW
        self.summaries: list[tuple[str, tuple[str, ...]]] = []
        #: what the agent held when it asked for each summary (its ``messages``, read then)
        self.held_at: list[tuple[Held, ...]] = []
        self.holding: Callable[[], list[dict[str, Any]]] = list
        self.calls = 0  # the turn's model calls so far (summaries aside)
        self.full_at: int | None = None  # the call before which the window is full
        self.summary_fails = False
        self.redacts = ""  # the id the prompt takes when the next answer redacts it
        #: what the agent held, and its state, at each model call of this call of the agent
        self.seen: list[tuple[tuple[Held, ...], dict[str, object]]] = []
        self.state_of: Callable[[], dict[str, object]] = dict
        #: what the agent held right after it redacted the prompt, in this call
        self.redacted: tuple[Held, ...] | None = None
        #: the process dies (a tool of a dying call calls it, then raises :class:`Died`)
        self.die: Callable[[], None] = lambda: None

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {"context_window_limit": self.WINDOW}

    async def count_tokens(self, messages: Any, *args: Any, **kwargs: Any) -> int:
        """What the agent projects the next call's input to be, before it (its proactive
        compression compares it with the window): over the window before the call the
        turn marks full, nothing before any other."""
        return 10 * self.WINDOW if self.calls == self.full_at else 0

    def structured_output(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover
        raise NotImplementedError("the faked model writes no structured output")

    async def stream(
        self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any
    ) -> AsyncIterator[dict[str, Any]]:
        last = messages[-1]["content"] if messages else []
        if last and last[0].get("text") == ASK:
            if self.summary_fails:
                raise injected(RuntimeError(SUMMARY_DOWN))
            sent = tuple(i for m in messages[:-1] for i in ids_of(m))
            name = f"s{len(self.summaries) + 1}"
            self.summaries.append((name, sent))
            self.held_at.append(tuple(held_of(m) for m in self.holding()))
            for event in _text(f"[{name}] " + " ".join(sent)):
                yield event
            return
        self.calls += 1
        self.seen.append((tuple(held_of(m) for m in self.holding()), self.state_of()))
        if not self.replies:  # the agent called more often than the lockstep can tell
            raise CouldNotCheck(
                f"the faked model has no reply scripted for the turn's call {self.calls}"
            )
        reply = self.replies.pop(0)
        if reply == OVERFLOW:
            raise injected(ContextWindowOverflowException(OVERFLOW))
        if reply == PROVIDER_DOWN:
            raise injected(RuntimeError(PROVIDER_DOWN))
        if self.redacts:  # a guardrail's verdict on the prompt, with the first answer
            yield {"redactContent": {"redactUserContentMessage": f"[{self.redacts}] redacted"}}
            self.redacts = ""
            # the agent redacted the prompt as it took the event in: what it holds now
            self.redacted = tuple(held_of(m) for m in self.holding())
        if isinstance(reply, str):
            for event in _text(reply):
                yield event
            return
        yield {"messageStart": {"role": "assistant"}}
        for call in reply:
            yield {
                "contentBlockStart": {"start": {"toolUse": {"toolUseId": call, "name": "lookup"}}}
            }
            yield {
                "contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps({"key": call})}}}
            }
            yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use"}}


def _text(text: str) -> list[dict[str, Any]]:
    return [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"start": {}}},
        {"contentBlockDelta": {"delta": {"text": text}}},
        {"contentBlockStop": {}},
        {"messageStop": {"stopReason": "end_turn"}},
    ]


def held_of(message: dict[str, Any]) -> Held:
    blocks = []
    for block in message.get("content", []):
        if "text" in block:
            m = ID.match(block["text"])
            blocks.append(Block("text", m.group(1) if m else block["text"][:40]))
        elif "toolUse" in block:
            blocks.append(Block("call", block["toolUse"]["toolUseId"]))
        elif "toolResult" in block:
            blocks.append(Block("result", block["toolResult"]["toolUseId"]))
    return Held(message["role"], tuple(blocks))


def manager(settings: Settings) -> Any:
    options: dict[str, Any] = {"pin_first": settings.pin} if settings.pin is not None else {}
    if settings.proactive:
        options["proactive_compression"] = {"compression_threshold": PROACTIVE_AT}
    if settings.manager == SUMMARIZING:
        return SummarizingConversationManager(
            summary_ratio=settings.share, preserve_recent_messages=settings.keep, **options
        )
    return SlidingWindowConversationManager(window_size=settings.keep, **options)


#: the share of the window at which a proactive manager reduces (any share works: a call
#: the turn marks full is projected at ten windows, any other at none)
PROACTIVE_AT = 0.7


def session_manager(store: str, folder: Path) -> Any:
    """A new session manager of ``store`` over ``folder``: the message log
    (``FileSessionManager``) or, from 1.55 on, one snapshot of the agent
    (``SnapshotSessionManager`` over ``LocalFileStorage``, the documented path for new
    agents)."""
    if store == "snapshot":
        from strands.session import SnapshotSessionManager
        from strands.storage import LocalFileStorage

        return SnapshotSessionManager(session_id="s", storage=LocalFileStorage(str(folder)))
    return FileSessionManager(session_id="s", storage_dir=str(folder))


class Conversation:
    """One agent, its manager and its file session, restorable."""

    def __init__(self, settings: Settings, folder: Path) -> None:
        self.settings = settings
        #: the session's storage, and its copy as a death left it (the next agent's)
        self.folder, self.dead = folder / "live", folder / "dead"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.model = ScriptedModel()
        self.model.holding = lambda: self.agent.messages
        self.model.state_of = self.state
        self.model.die = self.die
        self.agent = self.new_agent()
        self.awaiting: list[str] = []  # the ids of the interrupts that await the user
        #: what the agent held and its state when its process died
        self.died: tuple[tuple[Held, ...], dict[str, object]] | None = None
        self.prompt: list[dict[str, Any]] = []  # the user's last prompt object

    def new_agent(self) -> Any:
        return Agent(
            model=self.model,
            messages=[
                {"role": m.role, "content": [{"text": f"[{m.blocks[0].id}] opening"}]}
                for m in opening(self.settings.opening)
            ],
            tools=[lookup],
            agent_id="agent",
            conversation_manager=manager(self.settings),
            session_manager=session_manager(self.settings.store, self.folder),
            callback_handler=None,
        )

    def turn(self, turn: Turn) -> Observed:
        replies: list[Any] = [*turn.replies[:-1], f"[{turn.answer}] done"]
        if turn.overflow_at is not None:
            replies.insert(turn.overflow_at, OVERFLOW)
        if turn.error_at is not None:
            replies.insert(turn.error_at, PROVIDER_DOWN)
        self.model.replies = replies
        self.model.calls, self.model.full_at = 0, turn.full_at
        self.model.summary_fails = turn.summary_fails
        self.model.redacts = turn.redacts
        if turn.user_writes:  # the user's code, before it calls the agent
            self.agent.state.set("user", turn.user_writes)
        # the prompt as a list of messages (an input the agent takes as it is): a retry
        # passes the very object of the call before
        if not (turn.retries and self.prompt):
            self.prompt = [{"role": "user", "content": [{"text": f"[{turn.prompt}] ask"}]}]
        return self.call(self.prompt)

    def answer(self) -> Observed:
        """The user approves each call that awaits an answer, with the ids the stopped
        call returned (as an application keeps them for its user, across a restart)."""
        return self.call(
            [{"interruptResponse": {"interruptId": i, "response": "yes"}} for i in self.awaiting]
        )

    def call(self, prompt: Any) -> Observed:
        """One call of the agent, as its user makes it."""
        before = len(self.model.summaries)
        raised, self.awaiting, self.died = None, [], None
        self.model.redacted, self.model.seen = None, []
        try:
            result = self.agent(prompt)
            if result.stop_reason == "interrupt":
                self.awaiting = [i.id for i in result.interrupts or ()]
        except Died:
            if self.died is None:
                raise CouldNotCheck("the agent died but the storage was not kept") from None
        except Exception as e:
            # ctxaudit's own error (the script ran out, a bug in the fake) is never the
            # agent's failed reduction: the lockstep could not check the turn
            why = could_not_check(e)
            if why is not None:
                raise CouldNotCheck(f"the turn raised in ctxaudit's own code: {why}") from e
            # the agent let a scripted fault escape (the overflow it could not make room
            # for, a failed summary): observed; anything else the agent raised is its own
            if not carries_injected(e):
                raise
            raised = f"{type(e).__name__}: {e}"
        return Observed(
            raised,
            tuple(self.model.summaries[before:]),
            tuple(self.model.held_at[before:]),
            bool(self.awaiting),
            self.died,
            self.model.redacted,
            tuple(self.model.seen),
        )

    def die(self) -> None:
        """The process dies now: the storage is kept as it is (the agent that goes on in
        this process for a moment writes only to the live folder), with what the agent
        held and its state."""
        shutil.copytree(self.folder, self.dead)
        self.died = (tuple(self.held()), self.state())

    def held(self) -> list[Held]:
        return [held_of(m) for m in self.agent.messages]

    def state(self) -> dict[str, object]:
        return dict(self.agent.state.get())

    def restore(self) -> None:
        if self.dead.exists():  # after a death: the storage as the death left it
            shutil.rmtree(self.folder)
            self.dead.rename(self.folder)
        self.agent = self.new_agent()

    def close(self) -> None:
        pass


class Restore:
    """The concern's adapter: strands' Agent with a file session."""

    managers = MANAGERS
    pins: bool
    opens = True  # Agent(messages=...): "Initialize an agent with existing messages"
    asks = True  # a tool's ToolContext.interrupt (interrupts came before 1.40.0)
    #: a guardrail's redaction of the user's message (redactContent in the model's stream,
    #: as Bedrock's guardrails send it; the session manager's redact_latest_message)
    redacts = True
    #: its process can die while a tool runs; when each store saves: the message log
    #: "persist[s] each message individually" (the snapshot module's docstring); the
    #: snapshot saves "after every agent invocation completes" by default
    #: (``save_latest_strategy="invocation"``)
    #: (and "Guardrail redactions are flushed immediately under every strategy")
    dies = True
    #: the user's code writes the agent's state (``agent.state.set``) between calls
    user_state = True
    #: ... and calls the agent again with the prompt object a provider error left
    retries = True
    #: and the agent "Sync[s] agent after reduce_context to keep conversation_manager_state
    #: up to date in the session" (Agent._execute_event_loop_cycle)
    saves = {"file": (MESSAGE,), "snapshot": (INVOCATION, REDACTION, REDUCTION)}

    def __init__(self, version: str = "") -> None:
        import inspect

        self.name = f"strands-agents {version} Agent".replace("  ", " ")
        # pin_first came with 1.43.0, proactive compression earlier, the snapshot
        # session manager with 1.55.0
        options = inspect.signature(SummarizingConversationManager).parameters
        self.pins = "pin_first" in options
        self.proactive = "proactive_compression" in options
        try:
            from strands.session import SnapshotSessionManager  # noqa: F401

            self.stores: tuple[str, ...] = ("file", "snapshot")
        except ImportError:
            self.stores = ("file",)

    def conversation(self, settings: Settings, folder: Path) -> Conversation:
        return Conversation(settings, folder)

    def spell(self, settings: Settings) -> str:
        pin = f", pin_first={settings.pin}" if settings.pin is not None else ""
        if settings.proactive:
            pin += f", proactive_compression={{'compression_threshold': {PROACTIVE_AT}}}"
        store = (
            "SnapshotSessionManager(storage=LocalFileStorage(...))"
            if settings.store == "snapshot"
            else "FileSessionManager(storage_dir=...)"
        )
        agent = f"Agent(messages=<{settings.opening} of its own>) " if settings.opening else ""
        if settings.manager == SUMMARIZING:
            return agent + (
                f"SummarizingConversationManager(summary_ratio={settings.share}, "
                f"preserve_recent_messages={settings.keep}{pin}) with {store}"
            )
        return (
            agent
            + f"SlidingWindowConversationManager(window_size={settings.keep}{pin}) with {store}"
        )
