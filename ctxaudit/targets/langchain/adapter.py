"""langchain's ``SummarizationMiddleware`` as the fold concern's adapter
(:mod:`ctxaudit.concerns.fold`): driven as an agent drives it, read through its public API.

Runs inside a langchain environment (:mod:`ctxaudit.targets.langchain.tree`). Only the
LLM is faked, with langchain-core's own ``GenericFakeChatModel``: it is the
middleware's ``model`` (whose profile gives a fraction its window) and writes the
summaries, or, where the release takes one and the settings say so, a ``summarizer``
function of ours does. What is observed is public: the state update ``before_model``
returns, applied with langgraph's own ``add_messages`` reducer as the agent applies it,
what the summarizer was sent, and what ``before_model`` raises. Tokens are counted by a
``token_counter`` we pass (a documented parameter) with the lockstep's count.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.exceptions import ModelAuthenticationError
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.graph.message import add_messages
from pydantic import Field

from ctxaudit.concerns.fold import (
    ANY,
    BY_FUNCTION,
    BY_MODEL,
    CLAUSES,
    FRACTION,
    MESSAGES,
    ONE,
    SUMMARY_DOWN,
    TOKENS,
    Contract,
    Message,
    Observed,
    Settings,
    Shown,
)


def documents_clauses() -> bool:
    """The release documents ``TriggerClause`` (AND within a clause, OR across, and a
    threshold met by the computed *or provider-reported* count): 1.3.5 and later."""
    module = importlib.import_module("langchain.agents.middleware.summarization")
    return hasattr(module, "TriggerClause")


def takes_summarizer() -> bool:
    """The release takes a ``summarizer`` that writes the summaries in the model's place
    (a function of the messages to summarize, or a chat model): 1.5 and later."""
    return "summarizer" in inspect.signature(SummarizationMiddleware.__init__).parameters


def arguments(settings: Settings) -> dict[str, Any]:
    """The middleware's arguments, as a user writes them: a trigger of one ``(kind,
    value)``, a list of them, or a list of ``TriggerClause`` dicts."""
    trigger: Any
    if settings.form == ONE:
        trigger = settings.trigger[0][0]
    elif settings.form == ANY:
        trigger = [clause[0] for clause in settings.trigger]
    else:
        trigger = [dict(clause) for clause in settings.trigger]
    return {"trigger": trigger, "keep": settings.keep, "trim_tokens_to_summarize": None}


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
#: a provider other than the summarizing model's (another model answered)
OTHER_PROVIDER = "another-provider"


class Agent:
    """The state an agent keeps, and its middleware: one conversation."""

    def __init__(self, settings: Settings, count: Callable[[str], int]) -> None:
        window = settings.window
        profile = {"max_input_tokens": window} if window is not None else None
        self.summarizer = Summarizer(messages=iter(()), profile=profile)
        extra: dict[str, Any] = {}
        if settings.summarizer == BY_FUNCTION:
            extra["summarizer"] = self.summarize

        def counter(messages: Sequence[BaseMessage]) -> int:
            return sum(count(str(m.content)) for m in messages)

        self.middleware = SummarizationMiddleware(
            self.summarizer, token_counter=counter, **arguments(settings), **extra
        )
        self.messages: list[BaseMessage] = []

    def summarize(self, messages: list[BaseMessage]) -> str:
        """The ``summarizer`` function: it writes what the fake model would, from the
        messages it is given, recorded as the model's prompts are."""
        self.summarizer.prompts.append("\n".join(str(m.content) for m in messages))
        if self.summarizer.fail:
            raise RuntimeError(SUMMARY_DOWN)
        return f"SUMMARY-{len(self.summarizer.prompts)}"

    def append(self, message: Message) -> None:
        self.messages = add_messages(self.messages, [langchain_message(message)])

    def before_model(self, summarizer_fails: bool) -> Observed:
        sent = len(self.summarizer.prompts)
        self.summarizer.fail = summarizer_fails
        try:
            update = self.middleware.before_model({"messages": list(self.messages)}, None)
        except Exception as exc:  # what the run would raise
            prompt = self.summarizer.prompts[sent] if len(self.summarizer.prompts) > sent else None
            return Observed(False, prompt, f"{type(exc).__name__}: {exc}", None)
        finally:
            self.summarizer.fail = False
        called = len(self.summarizer.prompts) > sent
        prompt = self.summarizer.prompts[-1] if called else None
        if update is not None:
            self.messages = add_messages(self.messages, update["messages"])
        written = f"SUMMARY-{len(self.summarizer.prompts)}" if called else None
        return Observed(update is not None, prompt, None, written)

    def shown(self) -> list[Shown]:
        return [shown(m) for m in self.messages]


def langchain_message(message: Message) -> BaseMessage:
    if message.kind == "human":
        return HumanMessage(message.text, id=message.id)
    if message.kind == "tool":
        assert message.answers is not None
        return ToolMessage(message.text, id=message.id, tool_call_id=message.answers)
    extra: dict[str, Any] = {}
    if message.reported is not None:
        extra["usage_metadata"] = {
            "input_tokens": message.reported,
            "output_tokens": 0,
            "total_tokens": message.reported,
        }
        provider = OTHER_PROVIDER if message.by_other else PROVIDER
        extra["response_metadata"] = {"model_provider": provider}
    calls = [{"name": "t", "args": {}, "id": c, "type": "tool_call"} for c in message.calls]
    return AIMessage(message.text, id=message.id, tool_calls=calls, **extra)


def shown(message: BaseMessage) -> Shown:
    """A message as the lockstep compares it: its type, id, text, calls and answered call."""
    calls = tuple(c["id"] or "" for c in getattr(message, "tool_calls", []) or [])
    answers = message.tool_call_id if isinstance(message, ToolMessage) else None
    return Shown(message.type, str(message.id), str(message.content), calls, answers)


INCLUSIVE = (
    "SummarizationMiddleware (1.2.0): 'trigger: One or more thresholds that trigger "
    "summarization ... # Trigger summarization when 3000 tokens is reached'; TriggerClause "
    "(1.3.5 on): 'Trigger when the computed (or provider-reported) token count reaches or "
    "exceeds this value'"
)


class Summarization:
    """The fold concern's adapter of the release loaded here."""

    name = "langchain SummarizationMiddleware"
    trigger_kinds = keep_kinds = (MESSAGES, TOKENS, FRACTION)
    summary_kind = "human"  # the summary is a HumanMessage

    def __init__(self, version: str = "") -> None:
        self.name = f"langchain {version} SummarizationMiddleware".replace("  ", " ")
        clauses = documents_clauses()
        self.forms = (ONE, ANY, CLAUSES) if clauses else (ONE, ANY)
        self.summarizers = (BY_MODEL, BY_FUNCTION) if takes_summarizer() else (BY_MODEL,)
        # a provider's report meets a token threshold where TriggerClause documents it
        self.contract = Contract(inclusive=True, reports=clauses, quoted=INCLUSIVE)

    def conversation(self, settings: Settings, count: Callable[[str], int]) -> Agent:
        return Agent(settings, count)

    def spell(self, settings: Settings) -> str:
        """The configuration as a user writes it."""
        extra = ", summarizer=<function>" if settings.summarizer == BY_FUNCTION else ""
        window = f" (model profile max_input_tokens={settings.window})" if settings.window else ""
        return f"SummarizationMiddleware(model, **{arguments(settings)!r}{extra}){window}"
