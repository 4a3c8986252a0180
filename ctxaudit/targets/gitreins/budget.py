"""gitreins' ``EvalCap`` as a budget meter (:mod:`ctxaudit.concerns.budget`).

EvalCap reports a cap as a message (the iteration cap's refuses a call before it is
recorded; the token and time caps' come after); its clock is the wall clock, read
through ``time.time``, which each step sets to the lockstep's time.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ctxaudit.concerns.budget import CACHE, CHECK, RESET, TIME, TOOL_CALLS, Call
from ctxaudit.invariants.budget import Meters

if TYPE_CHECKING:
    from ctxaudit.targets.gitreins.tree import GitreinsModules
    from model.config import Caps

#: the first words of EvalCap's message for each cap (``model.budget.Cap``'s values)
CAP_WORDS = {
    "Iteration cap": "iterations",
    "Time cap": "time",
    "Input token budget": "input",
    "Output token budget": "output",
}


def reported(message: str | None) -> str | None:
    """The cap EvalCap's message names (None: no message)."""
    if message is None:
        return None
    for words, cap in CAP_WORDS.items():
        if message.startswith(words):
            return cap
    raise AssertionError(f"unrecognised cap message: {message!r}")


@contextlib.contextmanager
def clock_at(now: float) -> Iterator[None]:
    """The wall clock EvalCap reads (``time.time``, the standard library's, not a
    gitreins internal) reads ``now`` for the duration of one step."""
    real = time.time
    time.time = lambda: now
    try:
        yield
    finally:
        time.time = real


class Meter:
    """One EvalCap, driven as a :class:`~ctxaudit.concerns.budget.BudgetMeter`."""

    def __init__(self, cap: Any) -> None:
        self.cap = cap

    def start(self, now: float) -> None:
        with clock_at(now):
            self.cap.start()

    def record_call(self, call: Call, now: float) -> str | None:
        with clock_at(now):
            return reported(
                self.cap.record_llm_call(
                    prompt_tokens=call.prompt,
                    completion_tokens=call.completion,
                    cache_read_tokens=call.cache_read,
                    cache_write_tokens=call.cache_write,
                )
            )

    def record_tool_call(self, now: float) -> str | None:
        with clock_at(now):
            return reported(self.cap.record_tool_call())

    def check(self, now: float) -> str | None:
        with clock_at(now):
            return reported(self.cap.check())

    def reset(self) -> None:
        self.cap.reset_context_tracking()

    def meters(self) -> Meters:
        """What EvalCap shows (the iteration credit is what its call cap counts)."""
        c = self.cap
        return Meters(
            c.iteration_credit,
            c.cumulative_input_tokens,
            c.cumulative_output_tokens,
            c.cumulative_cache_read,
            c.cumulative_cache_write,
        )


class Budget:
    """gitreins' meter: every capability of the budget concern."""

    name = "EvalCap"
    capabilities = frozenset({TOOL_CALLS, TIME, CACHE, CHECK, RESET})

    def __init__(self, mods: GitreinsModules) -> None:
        self.mods = mods

    def meter(self, caps: Caps) -> Meter:
        return Meter(self.mods.eval_cap.EvalCap(**caps.spec()))
