"""Budget meter: B1-B5 (docs/properties.md, section 1). Pure; the clock is passed in.

A ``Budget`` is an immutable value. Every operation returns the next value
and, where the spec says a cap is reported, the set of caps reached.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from model.config import Caps


class Cap(StrEnum):
    ITERATIONS = "iterations"
    TIME = "time"
    INPUT = "input"
    OUTPUT = "output"


@dataclass(frozen=True)
class Budget:
    caps: Caps
    input: int = 0  # B1: prompt + cache_read + cache_write since the last reset
    output: int = 0  # B1: completion since the last reset
    cache_read: int = 0
    cache_write: int = 0
    credit: float = 0.0  # B3: iterations used; spans the whole run (B5)
    started: bool = False  # B4: the clock runs once started; spans the whole run

    # B3: an LLM call or a tool call is refused when the credit is already at the cap.
    def iterations_exhausted(self) -> bool:
        limit = self.caps.max_iterations
        return limit > 0 and self.credit >= limit

    def llm_call(
        self, *, prompt: int, completion: int, cache_read: int, cache_write: int, elapsed: float
    ) -> tuple[Budget, frozenset[Cap]]:
        if self.iterations_exhausted():
            return self, frozenset({Cap.ITERATIONS})  # B3: refused, nothing recorded
        after = replace(
            self,
            credit=self.credit + 1.0,
            input=self.input + prompt + cache_read + cache_write,  # B1
            output=self.output + completion,
            cache_read=self.cache_read + cache_read,
            cache_write=self.cache_write + cache_write,
        )
        return after, after.hard_caps(elapsed)

    def tool_call(self, *, elapsed: float) -> tuple[Budget, frozenset[Cap]]:
        if self.iterations_exhausted():
            return self, frozenset({Cap.ITERATIONS})
        after = replace(self, credit=self.credit + self.caps.tool_call_weight)
        return after, after.hard_caps(elapsed)

    def hard_caps(self, elapsed: float) -> frozenset[Cap]:
        """B2 and B4: the caps reached now (``elapsed`` seconds since start)."""
        c = self.caps
        reached = set()
        if c.max_seconds > 0 and self.started and elapsed >= c.max_seconds:
            reached.add(Cap.TIME)
        if c.max_input_tokens > 0 and self.input >= c.max_input_tokens:
            reached.add(Cap.INPUT)
        if c.max_output_tokens > 0 and self.output >= c.max_output_tokens:
            reached.add(Cap.OUTPUT)
        return frozenset(reached)

    def start(self) -> Budget:
        return replace(self, started=True)

    def reset(self) -> Budget:
        """B5: meters to zero; credit and clock untouched."""
        return replace(self, input=0, output=0, cache_read=0, cache_write=0)
