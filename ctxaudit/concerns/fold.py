"""The fold concern (C1, S6, S7): what a harness's adapter must do for the fold lockstep
(:mod:`ctxaudit.locksteps.fold`) to drive a summarizing conversation.

A harness that summarizes looks at the conversation before each model call; when its
trigger holds it replaces the oldest messages with one summary and keeps a tail of the
newest as they are (``model/fold.py``). The lockstep builds a conversation message by
message (users speak, the model answers with text or parallel tool calls whose results
come back at once, late, out of order or never; a result arrives whose call is gone),
and before each model call asks the harness to do what it does there
(:meth:`Conversation.before_model`), with the summarizer faked: it writes a summary
that names itself, records what it was sent, and fails when the step says so. The
adapter says what it observed (:class:`Observed`) and shows the conversation it holds
(:meth:`Conversation.shown`), all of it through the harness's public API.

What the adapter declares, so the lockstep draws only what the harness has:

- the *forms* of trigger its configuration takes (:data:`ONE`, :data:`ANY`,
  :data:`CLAUSES`) and the *kinds* of threshold and of kept tail (:data:`TOKENS`,
  :data:`MESSAGES`, :data:`FRACTION` of the model's window);
- who may write the summaries (:data:`BY_MODEL`, :data:`BY_FUNCTION`);
- its documented :class:`Contract`: whether reaching a threshold is enough, and whether
  a provider's report of its tokens counts; quoted from its docs, the model's
  parameters, never a branch of the lockstep.

The harness counts tokens with the counter the lockstep hands it (``count``: one
message's text to its tokens), as a harness's documented ``token_counter`` takes one, so
both sides count alike.

Nothing here imports the model or Hypothesis: an adapter imports this module wherever its
harness is loaded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

#: the forms of trigger a configuration can take
ONE = "one threshold"  # a single (kind, threshold)
ANY = "a list"  # any of several thresholds (an empty list: never)
CLAUSES = "clauses"  # any of several clauses, each holding when all its thresholds do
FORMS = (ONE, ANY, CLAUSES)
#: the kinds of threshold and of kept tail
TOKENS, MESSAGES, FRACTION = "tokens", "messages", "fraction"  # fraction: of the window
KINDS = (MESSAGES, TOKENS, FRACTION)
#: who writes the summaries: the model the harness summarizes with, or a function the
#: user hands it
BY_MODEL, BY_FUNCTION = "model", "function"
#: what the faked summarizer's error says when a step asks it to fail; the step's error
#: must carry it (S7: a failed summary fails the step)
SUMMARY_DOWN = "ctxaudit: the summarizer is down"


@dataclass(frozen=True)
class Message:
    """One message the lockstep adds. Its text starts with its id in brackets
    (``[h3]``), so the lockstep finds it again in what the summarizer was sent."""

    kind: Literal["human", "ai", "tool"]
    id: str
    text: str
    calls: tuple[str, ...] = ()  # ai: the ids of the tool calls it asks for
    answers: str | None = None  # tool: the id of the call it answers
    reported: int | None = None  # ai: the input tokens its provider reported, if any
    #: ai: the report was made by a provider other than the one whose window the
    #: thresholds measure (another model answered): it counts no token of that window
    by_other: bool = False


@dataclass(frozen=True)
class Shown:
    """One message of the conversation as the harness holds it (a summary as whatever
    message the harness writes it into: :attr:`FoldAdapter.summary_kind`)."""

    kind: str  # "human", "ai", "tool", "system"
    id: str
    text: str
    calls: tuple[str, ...] = ()
    answers: str | None = None


@dataclass(frozen=True)
class Settings:
    """A configuration, as a user of the harness writes it."""

    form: str  # the trigger's form, one of :data:`FORMS`
    #: the trigger: clauses, each of (kind, threshold) pairs; :data:`ONE` is one clause
    #: of one pair, :data:`ANY` clauses of one pair each
    trigger: tuple[tuple[tuple[str, float], ...], ...]
    keep: tuple[str, float]  # the kept tail: (kind, amount)
    window: int | None  # the model's context window (None: the model declares none)
    summarizer: str = BY_MODEL


@dataclass(frozen=True)
class Observed:
    """What one step before a model call did, as the harness's public API shows it."""

    folded: bool  # the harness replaced messages with a summary
    prompt: str | None  # what the summarizer was sent, if it was called
    raised: str | None  # the step's error (its type and text), if it raised
    summary: str | None  # the text the faked summarizer wrote, if it wrote one


@dataclass(frozen=True)
class Contract:
    """Where a harness's documented contract differs from the specification's defaults
    (docs/properties.md, C1), each with the doc text that says so."""

    inclusive: bool  # reaching a threshold is enough (>=); False: it must be passed (>)
    reports: bool  # a provider-reported token count can meet a token threshold too
    quoted: str  # the harness's docs, quoted, with where


@dataclass(frozen=True)
class Step:
    """One step before a model call, as the model decides it: what a registered
    finding's region reads (the target's ``left_out``)."""

    raw_cut: int  # where the kept tail would start before whole units are kept
    cut: int  # where it starts (0: nothing to fold)
    fires: bool  # the model folds here
    due: bool  # the trigger holds (a fold may still keep everything: cut 0)
    fires_on_stale: bool  # the trigger holds if reports made before a fold are read too
    summarizer_fails: bool
    in_group: bool  # the raw cut lands on a tool result
    #: the tail as keep measures it holds results of more than one earlier model
    #: message, or an earlier message's result past the results it starts with
    splits_units: bool = False
    #: the harness's fold kept a tool result whose call it summarized (invariant F3)
    orphaned: bool = False


class Conversation(Protocol):
    """One conversation under the harness's summarization, configured."""

    def append(self, message: Message) -> None:
        """Add a message, as the agent adds each one to its state."""

    def before_model(self, summarizer_fails: bool) -> Observed:
        """What the harness does before a model call; the faked summarizer raises an
        error carrying :data:`SUMMARY_DOWN` when ``summarizer_fails``. An error the step
        raises is observed, never raised."""

    def shown(self) -> list[Shown]:
        """The conversation the harness holds now, oldest first."""


class FoldAdapter(Protocol):
    """How the fold lockstep reaches a harness's summarization."""

    #: how reports name it ("langchain SummarizationMiddleware")
    name: str
    #: the trigger forms (:data:`FORMS`) its configuration takes
    forms: tuple[str, ...]
    #: the threshold kinds (:data:`KINDS`) a trigger takes, and the kept tail's kinds
    trigger_kinds: tuple[str, ...]
    keep_kinds: tuple[str, ...]
    #: who may write its summaries (:data:`BY_MODEL`, :data:`BY_FUNCTION`)
    summarizers: tuple[str, ...]
    #: the kind of message a summary is written into ("human", "system" ...)
    summary_kind: str
    contract: Contract

    def conversation(self, settings: Settings, count: Callable[[str], int]) -> Conversation:
        """A new, empty conversation under ``settings``, its tokens counted by ``count``."""

    def spell(self, settings: Settings) -> str:
        """``settings`` as a user of the harness writes them (a counterexample shows it)."""
