"""Compaction valve: V1-V7 (docs/properties.md, section 2), one LLM call per step. Pure.

The loop (docs/properties.md, section 2): check hard caps (and, per B3, the iteration credit, which
is "checked before the call": a call that would be refused is not made);
consider compaction; call the LLM; record
the call; run the tool calls it asked for (each recorded); repeat until the
LLM answers without tool calls (its verdict) or a cap ends the run.

``Valve.start`` gives the state just before the first LLM call; ``answer``
and ``fail`` apply what the LLM did with the pending call and run the loop up
to the next call (``pending`` is a ``Call``) or the end (an ``Ended``).
No time passes in this model: time caps are the budget model's (B4).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from model.budget import Budget, Cap
from model.config import MAX_COMPACTIONS, ValveConfig

# Section 2 and V6 (docs/properties.md): the verdict of a run that ended without the LLM's verdict.
INCOMPLETE = "INCOMPLETE"

# V6: words in an error's text that name the context window.
CONTEXT_WORDS = ("context", "token", "maximum", "exceeded", "window", "truncat", "length")


@dataclass(frozen=True)
class Call:
    """The next LLM call. After a compaction (V3) it carries exactly the
    system prompt and a progress prompt that lists ``verified`` (V4)."""

    compacted: bool
    verified: frozenset[int] = frozenset()


@dataclass(frozen=True)
class Ended:
    """How the run ended, and the run's verdict where the SPEC says it (``None``:
    it does not). section 2 (docs/properties.md): the loop repeats "until the LLM answers without
    tool calls (its verdict) or a cap ends the run"; V6: a failed call that cannot
    compact means "the run ends INCOMPLETE". So the run's verdict is the LLM's
    when it gave one; a run that ended without the LLM's verdict (a failure, an
    answer with no verdict in it, a cap) ends INCOMPLETE, V6's word for that end
    (for the cap and the empty answer a reading, not the SPEC's words:
    docs/properties.md, section 2, "The run's verdict"). Left unsaid: a cap that
    ends the run after every criterion was verified. Not part of
    equality: ``Ended("cap", caps)`` compares the end, not the verdict."""

    reason: str  # "verdict" | "cap" | "llm-failure"
    caps: frozenset[Cap] = frozenset()
    verdict: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Answer:
    """An LLM reply: its usage and the tool calls it asked for (none = verdict).
    ``writes`` are the sandbox keys its tool calls write, one per tool call
    (``None`` for a tool call that writes nothing)."""

    prompt: int = 0
    completion: int = 0
    cache_read: int = 0
    cache_write: int = 0
    writes: tuple[str | None, ...] = ()
    #: the verdict the answer's text gives when it asks for no tool calls; None
    #: for an answer with no text (no verdict in it)
    verdict: str | None = "COMPLETE"


# V6: the HTTP statuses with which providers refuse a context that is too long.
CONTEXT_STATUSES = (400, 413)


@dataclass(frozen=True)
class Failure:
    """A failed LLM call: an HTTP error (``status``), a transport failure (the
    request never reached the provider), or any other error with ``text``."""

    text: str
    status: int | None = None
    transport: bool = False

    def names_context(self) -> bool:
        """V6 (docs/properties.md): HTTP 400 or 413, whatever the text; any other
        status (401, 403, 404, 429, 5xx ...) never, whatever the text; a transport
        failure never; an error without a status when its text names the context."""
        if self.status is not None:
            return self.status in CONTEXT_STATUSES
        return not self.transport and any(w in self.text.lower() for w in CONTEXT_WORDS)


@dataclass(frozen=True)
class Valve:
    config: ValveConfig
    budget: Budget
    pending: Call | Ended
    compactions: int = 0
    sandbox: frozenset[str] = frozenset()

    @classmethod
    def start(cls, config: ValveConfig) -> Valve:
        first = cls(config, Budget(config.caps).start(), Call(compacted=False))
        return first._advance(compacted=False)

    @property
    def verified(self) -> frozenset[int]:  # V4
        keys = self.sandbox
        return frozenset(i for i in range(self.config.criteria) if f"verified_{i}" in keys)

    def fires(self) -> bool:
        """V1/V2/V5: compact before the next call?"""
        cap = self.config.caps.max_input_tokens
        meter = self.budget.input
        if cap <= 0 or meter <= 0 or self.compactions >= MAX_COMPACTIONS:
            return False
        return meter > int(cap * self.config.ratio)

    def answer(self, reply: Answer) -> Valve:
        assert isinstance(self.pending, Call), "the run has ended"
        budget, caps = self.budget.llm_call(
            prompt=reply.prompt,
            completion=reply.completion,
            cache_read=reply.cache_read,
            cache_write=reply.cache_write,
            elapsed=0.0,
        )
        state = replace(self, budget=budget)
        if caps:
            return state._end("cap", caps)
        if not reply.writes:
            return state._end("verdict", verdict=reply.verdict or INCOMPLETE)
        for key in reply.writes:
            if key is not None:
                state = replace(state, sandbox=state.sandbox | {key})
            budget, caps = state.budget.tool_call(elapsed=0.0)
            state = replace(state, budget=budget)
            if caps:
                return state._end("cap", caps)
        return state._advance(compacted=False)

    def fail(self, failure: Failure) -> Valve:
        assert isinstance(self.pending, Call), "the run has ended"
        if failure.names_context() and self.compactions < MAX_COMPACTIONS:  # V6
            return self._compact()._advance(compacted=True)
        return self._end("llm-failure")

    def _compact(self) -> Valve:  # V3
        return replace(self, compactions=self.compactions + 1, budget=self.budget.reset())

    def _advance(self, *, compacted: bool) -> Valve:
        caps = self.budget.hard_caps(0.0)
        if self.budget.iterations_exhausted():  # B3: checked before the call
            caps |= {Cap.ITERATIONS}
        if caps:
            return self._end("cap", caps)
        state = self
        if state.fires():
            state, compacted = state._compact(), True
        return replace(state, pending=Call(compacted, state.verified if compacted else frozenset()))

    def _end(
        self, reason: str, caps: frozenset[Cap] = frozenset(), verdict: str | None = None
    ) -> Valve:
        """End the run. Without the LLM's verdict it is INCOMPLETE (``Ended``), unless a
        cap ended it after every criterion was verified: then the SPEC does not say."""
        if verdict is None and (reason != "cap" or len(self.verified) < self.config.criteria):
            verdict = INCOMPLETE
        return replace(self, pending=Ended(reason, caps, verdict))
