"""Drive langchain's ``SummarizationMiddleware`` as an agent does, and read what it did.

Runs inside a langchain environment (:mod:`ctxaudit.targets.langchain.tree`). Only the
LLM is faked, with langchain-core's own ``GenericFakeChatModel``: it is the
middleware's ``model`` (whose profile gives a fraction its window) and writes the
summaries, or, where the release takes one and the configuration says so, a
``summarizer`` function of ours does. What is observed is public: the state update
``before_model`` returns, applied with langgraph's own ``add_messages`` reducer as the
agent applies it, what the summarizer was sent, and what ``before_model`` raises.
Tokens are counted by a ``token_counter`` we pass (a documented parameter), the model's
count (:func:`model.settlement.tokens` of each message's text), so both sides count
alike.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.exceptions import ModelAuthenticationError
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.graph.message import add_messages
from pydantic import Field

from ctxaudit.invariants.fold import Entry
from model.fold import Keep, Message, Trigger
from model.settlement import tokens

SUMMARY_DOWN = "ctxaudit: the summarizer is down"


def documents_clauses() -> bool:
    """The release documents ``TriggerClause`` (AND within a clause, OR across, and a
    threshold met by the computed *or provider-reported* count): 1.3.5 and later."""
    module = importlib.import_module("langchain.agents.middleware.summarization")
    return hasattr(module, "TriggerClause")


def takes_summarizer() -> bool:
    """The release takes a ``summarizer`` that writes the summaries in the model's place
    (a function of the messages to summarize, or a chat model): 1.5 and later."""
    return "summarizer" in inspect.signature(SummarizationMiddleware.__init__).parameters


def count(messages: Sequence[BaseMessage]) -> int:
    """The token counter handed to the middleware (the model counts the same way)."""
    return sum(
        tokens(m.content if isinstance(m.content, str) else str(m.content)) for m in messages
    )


def model_count(messages: Sequence[Message]) -> int:
    return sum(tokens(m.text) for m in messages)


@dataclass(frozen=True)
class Config:
    """The middleware's configuration, as a user writes it."""

    trigger: tuple[str, float] | tuple[tuple[str, float] | dict[str, float], ...]
    keep: tuple[str, float]
    window: int | None  # the model profile's max_input_tokens (None: no profile)
    #: who writes the summaries: the model, or a function given as ``summarizer``
    summarizer: Literal["model", "function"] = "model"

    def single(self) -> bool:
        """The trigger is one ``(kind, value)`` tuple, not a list."""
        return bool(self.trigger) and isinstance(self.trigger[0], str)

    def arguments(self) -> dict[str, Any]:
        trigger: Any = self.trigger if self.single() else list(self.trigger)
        return {"trigger": trigger, "keep": self.keep, "trim_tokens_to_summarize": None}

    def model_trigger(self, reports: bool) -> Trigger:
        items: list[Any] = [self.trigger] if self.single() else list(self.trigger)
        clauses = tuple(dict([i]) if isinstance(i, tuple) else dict(i) for i in items)
        return Trigger(clauses, inclusive=True, reports=reports)  # "reaches or exceeds"

    def model_keep(self) -> Keep:
        kind, value = self.keep
        if kind == "fraction":
            assert self.window is not None
            return Keep("tokens", max(1, math.floor(self.window * value)))
        return Keep("messages" if kind == "messages" else "tokens", int(value))


class Summarizer(GenericFakeChatModel):
    """The fake LLM: it writes ``SUMMARY-<n>`` and records each prompt; ``fail`` makes
    its next call raise an error the provider marks as not worth retrying."""

    prompts: list[str] = Field(default_factory=list)
    fail: bool = False

    def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> ChatResult:
        self.prompts.append("\n".join(str(m.content) for m in messages))
        if self.fail:
            raise ModelAuthenticationError(SUMMARY_DOWN)
        summary = AIMessage(f"SUMMARY-{len(self.prompts)}")
        return ChatResult(generations=[ChatGeneration(message=summary)])


#: the provider the reports name: the summarizing model's own, so the middleware reads
#: them (langchain-core derives a chat model's ``ls_provider`` from its class name,
#: lowercased, "Chat" stripped)
PROVIDER = Summarizer.__name__.lower()


@dataclass
class Observed:
    """What one ``before_model`` did."""

    messages: list[BaseMessage]  # the state after its update (unchanged: no update)
    folded: bool  # it returned an update
    prompt: str | None  # what the summarizer was sent, if it was called
    raised: BaseException | None = None


class Agent:
    """The state an agent keeps, and its middleware."""

    def __init__(self, config: Config) -> None:
        profile = {"max_input_tokens": config.window} if config.window is not None else None
        self.summarizer = Summarizer(messages=iter(()), profile=profile)
        extra: dict[str, Any] = {}
        if config.summarizer == "function":
            extra["summarizer"] = self.summarize
        self.middleware = SummarizationMiddleware(
            self.summarizer, token_counter=count, **config.arguments(), **extra
        )
        self.messages: list[BaseMessage] = []
        self._ids = itertools.count()

    def summarize(self, messages: list[BaseMessage]) -> str:
        """The ``summarizer`` function: it writes what the fake model would, from the
        messages it is given, recorded as the model's prompts are."""
        self.summarizer.prompts.append("\n".join(str(m.content) for m in messages))
        if self.summarizer.fail:
            raise RuntimeError(SUMMARY_DOWN)
        return f"SUMMARY-{len(self.summarizer.prompts)}"

    def next_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids)}"

    def append(self, message: BaseMessage) -> None:
        self.messages = add_messages(self.messages, [message])

    def before_model(self, *, summarizer_fails: bool = False) -> Observed:
        sent = len(self.summarizer.prompts)
        self.summarizer.fail = summarizer_fails
        try:
            update = self.middleware.before_model({"messages": list(self.messages)}, None)
        except Exception as exc:  # what the run would raise
            prompt = self.summarizer.prompts[sent] if len(self.summarizer.prompts) > sent else None
            return Observed(list(self.messages), False, prompt, exc)
        finally:
            self.summarizer.fail = False
        prompt = self.summarizer.prompts[-1] if len(self.summarizer.prompts) > sent else None
        if update is not None:
            self.messages = add_messages(self.messages, update["messages"])
        return Observed(list(self.messages), update is not None, prompt)


def human(id: str, text: str) -> HumanMessage:
    return HumanMessage(text, id=id)


def ai(id: str, text: str, calls: Sequence[str], reported: int | None) -> AIMessage:
    extra: dict[str, Any] = {}
    if reported is not None:
        extra["usage_metadata"] = {
            "input_tokens": reported,
            "output_tokens": 0,
            "total_tokens": reported,
        }
        extra["response_metadata"] = {"model_provider": PROVIDER}
    tool_calls = [{"name": "t", "args": {}, "id": c, "type": "tool_call"} for c in calls]
    return AIMessage(text, id=id, tool_calls=tool_calls, **extra)


def tool(id: str, text: str, call: str) -> ToolMessage:
    return ToolMessage(text, id=id, tool_call_id=call)


def view(message: BaseMessage) -> tuple[str, str, tuple[str, ...], str | None]:
    """What the lockstep compares of a message: its type, text, calls and answered call."""
    calls = tuple(c["id"] or "" for c in getattr(message, "tool_calls", []) or [])
    answers = message.tool_call_id if isinstance(message, ToolMessage) else None
    return message.type, str(message.content), calls, answers


def entry(message: BaseMessage) -> Entry:
    """A message as the fold's invariants see it (a summary is the human message it is)."""
    _, _, calls, answers = view(message)
    kind: Any = message.type if message.type in ("ai", "tool", "system") else "human"
    return Entry(kind, str(message.id), calls, answers)


def model_view(message: Message) -> tuple[str, str, tuple[str, ...], str | None]:
    kind = "human" if message.kind == "summary" else message.kind
    return kind, message.text, message.calls, message.answers
