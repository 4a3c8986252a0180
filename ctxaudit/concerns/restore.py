"""The restore concern (S2, S6 for a conversation an agent keeps, C1 for what it keeps of
it): what a harness's adapter must do for the restore lockstep
(:mod:`ctxaudit.locksteps.restore`) to drive an agent whose conversation is managed (folded
into a summary, or trimmed to a window) and persisted by a session manager.

A harness of this shape (strands-agents' ``Agent`` with a conversation manager and a
session manager) stores each message as the agent adds it, and the manager's own state
(the summary, how many stored messages it has removed) beside it; a new agent over the same
session restores the conversation from both. The user's duty, stated without any
algorithm: **the agent restored from a session holds the conversation the agent that wrote
it held** (nothing pinned lost, nothing folded or trimmed brought back, nothing doubled).

The lockstep runs whole turns through the harness's public entry point with the model
faked (:class:`Turn`): a user prompt, then model calls that ask for tools (run by the
harness, their results added as it adds them) or answer with text; a model call may first
report that the context window overflowed, so the harness reduces the conversation and
tries again; a proactive manager may reduce before a call that would fill the window;
the summarizer may fail; a model call may fail outright (the provider's error), ending the
turn without an answer. Between turns it restores the agent from its session and goes on with the
restored one. The adapter shows what the agent holds (:class:`Held`), through the
harness's public API.

Each message's text starts with its id in brackets (``[u3]``); a tool call's id is its
own (``t4``); a summary the faked model writes names itself and every message it was sent
(``[s2] u0 a1 t2 ...``), so the lockstep can tell what each fold summarized.

Nothing here imports the model or Hypothesis: an adapter imports this module wherever its
harness is loaded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

#: how a manager keeps the conversation in bounds
SUMMARIZING = "summarizing"  # folds the oldest share of messages into one summary
WINDOW = "window"  # drops the oldest messages beyond a window
MANAGERS = (SUMMARIZING, WINDOW)
#: what the faked model's overflow error says
OVERFLOW = "ctxaudit: the context window is full"
#: what the faked summarizer's error says when a turn asks it to fail
SUMMARY_DOWN = "ctxaudit: the summarizer is down"
#: what the faked model's provider error says (a failure that is not an overflow)
PROVIDER_DOWN = "ctxaudit: the provider failed"
#: a tool call whose id starts with this writes the agent's key-value state, as a tool
#: does: its id under ``"last"``, and one more under ``"writes"`` (read, then written)
WRITES = "w"
#: a tool call whose id starts with this asks the user before it runs (an approval): the
#: agent stops there, the call held without its result, until the user answers
ASKS = "q"
#: a tool call whose id starts with this is running when the agent's process dies: the
#: session's storage is left as it was at that moment (the adapter keeps a copy of it
#: then), and the next agent is built over it (:attr:`Turn.dies_at`)
DIES = "x"
#: when a session store saves (:attr:`RestoreAdapter.saves`): after every message the
#: agent adds; when a call of the agent ends; when a guardrail redacts a prompt
MESSAGE, INVOCATION, REDACTION = "message", "invocation", "redaction"
#: ... and when the agent has reduced the conversation on an overflow (before it retries)
REDUCTION = "reduction"


@dataclass(frozen=True)
class Settings:
    """A manager's configuration, as the harness's user writes it."""

    manager: str  # one of :data:`MANAGERS`
    keep: int  # summarizing: recent messages always kept; window: the window's size
    share: float  # summarizing: the share of the oldest messages folded
    pin: int | None  # the first messages pinned out of every fold or trim (None: off)
    store: str = ""  # which of the adapter's session stores keeps it (its ``stores``)
    #: the manager also reduces before a model call that would fill its window (the
    #: harness's proactive compression, best effort), not only on an overflow
    proactive: bool = False
    #: the agent is built with this many messages of its own (a pre-filled context:
    #: :func:`opening`), each time it is built, a restore's agent too
    opening: int = 0


@dataclass(frozen=True)
class Turn:
    """One call of the agent: a prompt, then each model call's answer in order: a tuple
    of tool call ids (the model asks for those tools at once), or ``()`` for the text that
    ends the turn (always the last)."""

    prompt: str  # the user message's id
    replies: tuple[tuple[str, ...], ...]
    #: the model call (by index) that first reports an overflowed window, if any
    overflow_at: int | None = None
    answer: str = ""  # the id of the text answer that ends the turn
    #: the model call (by index) before which the conversation would fill the window
    #: (a proactive manager reduces there)
    full_at: int | None = None
    #: every summary asked for in the turn fails (the summarizer's error carries
    #: :data:`SUMMARY_DOWN`)
    summary_fails: bool = False
    #: the model call (by index, in a turn with no overflow) that fails with a provider
    #: error (:data:`PROVIDER_DOWN`): the turn raises it, what came before stays held,
    #: and the user goes on with another prompt
    error_at: int | None = None
    #: the round (by index: one call, its id starting with :data:`ASKS`) whose tool asks
    #: the user before it runs: the agent stops there, and the rest of the turn (that
    #: tool's result, the later rounds, the answer; an overflow or an error scripted
    #: after it) comes when the user answers (:meth:`Conversation.answer`)
    asks_at: int | None = None
    #: the id the user's prompt takes when a guardrail of the model redacts it (the model
    #: says so in its first answer of the turn; strands: the stream's
    #: ``redactContent.redactUserContentMessage``): the agent then holds the prompt as
    #: ``[<id>] ...``; "" for none
    redacts: str = ""
    #: the round (by index: one call, its id starting with :data:`DIES`) whose tool is
    #: running when the agent's process dies: the turn ends there, the call held without
    #: its result; the storage stays as it was at that moment
    #: (:attr:`Observed.died`), and the next agent is built over it
    dies_at: int | None = None
    #: what the user's code writes to the agent's key-value state (under ``"user"``) right
    #: before it calls the agent ("" for nothing): the agent's store saves it with the call
    user_writes: str = ""
    #: the prompt is the very message object the user's code passed in the previous call,
    #: which a provider error ended (a retry): the agent may hold it twice, one object
    retries: bool = False


@dataclass(frozen=True)
class Block:
    """One block of a held message: its text's id, a tool call's id, or the id of the
    call a tool result answers."""

    kind: Literal["text", "call", "result"]
    id: str


@dataclass(frozen=True)
class Held:
    """One message as the agent holds it."""

    role: Literal["user", "assistant"]
    blocks: tuple[Block, ...]


def opening(n: int) -> list[Held]:
    """The messages an agent is built with (:attr:`Settings.opening`): a user's and an
    answer, in turn, their ids ``o0``, ``o1``, ..."""
    return [Held("assistant" if i % 2 else "user", (Block("text", f"o{i}"),)) for i in range(n)]


@dataclass(frozen=True)
class Observed:
    """What a turn did, as the harness's public API shows it."""

    raised: str | None  # the turn's error (type and text), if it raised
    #: what the faked model was asked to summarize, each summary's id with the ids it
    #: was sent (in order)
    summaries: tuple[tuple[str, tuple[str, ...]], ...]
    #: for each of ``summaries``, the conversation the agent held when it asked for it
    #: (the one the fold cut, before the summary replaced anything)
    held_at: tuple[tuple[Held, ...], ...]
    #: the call stopped awaiting the user's answer to a tool that asks (:data:`ASKS`)
    asked: bool = False
    #: the turn died (:attr:`Turn.dies_at`): what the agent held and its key-value state at
    #: that moment, as the harness's public API showed them then
    died: tuple[tuple[Held, ...], dict[str, object]] | None = None
    #: a guardrail redacted the prompt (:attr:`Turn.redacts`): what the agent held right
    #: after it did
    redacted: tuple[Held, ...] | None = None
    #: what the agent held, and its state, at each model call it made (summaries aside),
    #: in order: where a death's store saved mid-call, the lockstep reads what was saved
    seen: tuple[tuple[tuple[Held, ...], dict[str, object]], ...] = ()


@dataclass(frozen=True)
class RestoreStep:
    """A restore, as a registered finding's region reads it (the target's ``left_out``)."""

    settings: Settings
    reduced: bool  # the conversation was reduced (folded or trimmed) since it began
    #: a summary the manager asked for failed since the conversation began
    summary_failed: bool = False
    #: a guardrail redacted a prompt the agent held twice (a retried one) since then
    retried_redacted: bool = False


@dataclass(frozen=True)
class FoldStep:
    """A fold that took some of the newest messages its manager always keeps (R5), as a
    registered finding's region reads it."""

    settings: Settings
    took: tuple[Held, ...]  # the newest messages the summary was sent, oldest first


@dataclass(frozen=True)
class PinStep:
    """A turn after which the front no longer holds every one of the first ``pin``
    messages (R2), only the first ``first_try`` of them: as many as the conversation
    surely held when its manager may first have tried to reduce it. As a registered
    finding's region reads it."""

    settings: Settings
    first_try: int


#: what a registered finding's region is read on: a restore, a fold that broke R5, or a
#: turn after which the front holds only the pins of a manager's first try (R2)
RegionStep = RestoreStep | FoldStep | PinStep


class Conversation(Protocol):
    """An agent with its conversation manager and its session, configured."""

    def turn(self, turn: Turn) -> Observed:
        """Run one call of the agent as its user does, the model answering as ``turn``
        says. A scripted fault the call lets escape (the overflow, a failed summary:
        raised as :func:`ctxaudit.outcomes.injected`) is observed, never raised; any
        other error is raised: ctxaudit's own as ``CouldNotCheck``, the harness's as
        it is."""

    def answer(self) -> Observed:
        """The user approves the call that awaits an answer (in the agent that stopped, or
        in a restored one, as the harness's users resume): its tool runs and the turn goes
        on as its :class:`Turn` scripted. Errors as :meth:`turn`."""

    def held(self) -> list[Held]:
        """The conversation the agent holds now, oldest first."""

    def state(self) -> dict[str, object]:
        """The key-value state the agent keeps beside its conversation, as the harness's
        public API shows it (a harness that keeps none: ``{}``)."""

    def restore(self) -> None:
        """Replace the agent with a new one over the same session (a new process), its
        conversation restored by the harness; the lockstep goes on with the new one. After
        a turn that died, the session is the storage as it was at the death."""

    def close(self) -> None:
        """Release the session's storage (the example is over)."""


class RestoreAdapter(Protocol):
    """How the restore lockstep reaches a harness's agent."""

    #: how reports name it ("strands-agents Agent + FileSessionManager")
    name: str
    #: the managers (:data:`MANAGERS`) it has, and whether it pins (Settings.pin)
    managers: tuple[str, ...]
    pins: bool
    #: its session stores, by the names reports show ("file", "snapshot")
    stores: tuple[str, ...]
    #: its managers can also reduce proactively (:attr:`Settings.proactive`)
    proactive: bool
    #: its agent can be built with messages of its own (:attr:`Settings.opening`)
    opens: bool
    #: its tools can stop the agent to ask the user (:attr:`Turn.asks_at`)
    asks: bool
    #: a guardrail of its model can redact the user's prompt (:attr:`Turn.redacts`)
    redacts: bool
    #: optional (absent: False): its agent's process can be made to die while a tool runs
    #: (:attr:`Turn.dies_at`); then ``saves`` says, for each store, when it saves
    #: (:data:`MESSAGE`, :data:`INVOCATION`, :data:`REDACTION`, :data:`REDUCTION`), as the
    #: harness documents it
    dies: bool
    saves: Mapping[str, tuple[str, ...]]
    #: optional (absent: False): the user's code can write the agent's key-value state
    #: between calls (:attr:`Turn.user_writes`)
    user_state: bool
    #: optional (absent: False): the user's code can call the agent again with the prompt
    #: object a provider error left (:attr:`Turn.retries`)
    retries: bool

    def conversation(self, settings: Settings, folder: Path) -> Conversation:
        """A new agent under ``settings`` whose session lives in ``folder``."""

    def spell(self, settings: Settings) -> str:
        """``settings`` as a user of the harness writes them (a counterexample shows it)."""
