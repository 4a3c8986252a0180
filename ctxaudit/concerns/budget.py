"""The budget meter's protocol (B1-B5): what a harness's adapter must do for the budget
lockstep (:mod:`ctxaudit.locksteps.budget`) to drive its meter.

A harness's adapter wraps its meter in :class:`BudgetMeter` (configure it with caps,
start its clock, record a call or a tool call, ask it whether a cap is reached, reset
its context, read its counters) and says in :class:`BudgetAdapter` which of these the
harness has. Nothing here imports the model or Hypothesis: an adapter imports this
module wherever its harness is loaded.

The clock is the lockstep's: each step passes the wall time the meter must read
(``T0`` plus the seconds since it started), so B4's boundary (elapsed == the time cap)
is exact; the adapter makes its harness read it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Protocol

if TYPE_CHECKING:
    from ctxaudit.invariants.budget import Meters
    from model.config import Caps

#: what a harness may have besides recording LLM calls, each a rule of the lockstep
TOOL_CALLS = "tool calls"  # a tool call costs a share of a call (Caps.tool_call_weight)
TIME = "time cap"  # a cap on the seconds since the meter started (B4)
CACHE = "cache tokens"  # cache reads and writes, metered as input (B1)
CHECK = "check"  # it can be asked whether a cap is reached without a call (B2, B4)
RESET = "context reset"  # the token meters go back to zero; the calls span the run (B5)
CAPABILITIES = frozenset({TOOL_CALLS, TIME, CACHE, CHECK, RESET})

T0 = 1_800_000_000.0  # the wall time at which the meter's clock starts (any fixed time)


class Call(NamedTuple):
    """One LLM call's usage, as the provider reports it."""

    prompt: int
    completion: int
    cache_read: int = 0
    cache_write: int = 0


class BudgetMeter(Protocol):
    """One harness meter, configured with caps. A method returns the cap the meter
    reports after the step (a ``model.budget.Cap`` value: ``"iterations"``,
    ``"time"``, ``"input"``, ``"output"`` ...), or None; a call the meter refuses
    reports the call cap (``"iterations"``) and records nothing. ``now`` is the wall
    time the meter must read during the step."""

    def start(self, now: float) -> None:
        """Start the meter's clock (a meter whose clock starts with it does nothing)."""

    def record_call(self, call: Call, now: float) -> str | None:
        """Record one LLM call, or refuse it."""

    def record_tool_call(self, now: float) -> str | None:
        """Record one tool call (:data:`TOOL_CALLS`)."""

    def check(self, now: float) -> str | None:
        """Whether a cap is reached, recording nothing (:data:`CHECK`)."""

    def reset(self) -> None:
        """Reset the context's token meters (:data:`RESET`)."""

    def meters(self) -> Meters:
        """Its counters: calls (what its call cap counts), input (cached tokens
        included), output, cache reads, cache writes."""


class BudgetAdapter(Protocol):
    """How the lockstep reaches a harness's meter: a new one per example."""

    #: how reports name the meter ("EvalCap")
    name: str
    #: which of :data:`CAPABILITIES` the harness has; the rules of the others are never
    #: drawn
    capabilities: frozenset[str]

    def meter(self, caps: Caps) -> BudgetMeter:
        """A fresh meter with ``caps`` (``Caps.spec()`` names them as a harness would)."""
