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
    TOTAL = "total"
    REQUEST_INPUT = "request-input"
    TOOL_CALLS = "tool-calls"


@dataclass(frozen=True)
class Budget:
    caps: Caps
    input: int = 0  # B1: prompt + cache_read + cache_write since the last reset
    output: int = 0  # B1: completion since the last reset
    cache_read: int = 0
    cache_write: int = 0
    credit: float = 0.0  # B3: iterations used; spans the whole run (B5)
    started: bool = False  # B4: the clock runs once started; spans the whole run
    request_input: int = 0  # B2: the last call's input, for a per-call input cap
    tool_calls: int = 0  # B3: tool calls run (the batch cap's count)

    # B3: an LLM call or a tool call is refused when the credit is already at the cap.
    def iterations_exhausted(self) -> bool:
        limit = self.caps.max_iterations
        return self.caps.capped(limit) and self.credit >= limit

    def refusing(self) -> frozenset[Cap]:
        """B3: the caps that refuse the next LLM call (empty: it may be made)."""
        refused = {Cap.ITERATIONS} if self.iterations_exhausted() else set()
        if self.caps.refuse_over_cap:
            refused |= self.hard_caps(0.0) & {Cap.INPUT, Cap.OUTPUT, Cap.TOTAL}
        return frozenset(refused)

    def llm_call(
        self,
        *,
        prompt: int,
        completion: int,
        cache_read: int,
        cache_write: int,
        elapsed: float,
        request_input: int | None = None,
    ) -> tuple[Budget, frozenset[Cap]]:
        """Record one call; ``request_input`` is the input of the one request that was
        sent the whole context, where a call's usage sums several (default: the call's)."""
        refused = self.refusing()
        if refused:
            return self, refused  # B3: refused, nothing recorded
        sent = prompt + cache_read + cache_write
        after = replace(
            self.metered(prompt, completion, cache_read, cache_write),
            credit=self.credit + 1.0,
            request_input=sent if request_input is None else request_input,
        )
        return after, after.hard_caps(elapsed)

    def metered(self, prompt: int, completion: int, cache_read: int, cache_write: int) -> Budget:
        """B1: the meters with one request's tokens added (the credit untouched: a
        request that is part of a call, metered before the call is counted)."""
        return replace(
            self,
            input=self.input + prompt + cache_read + cache_write,
            output=self.output + completion,
            cache_read=self.cache_read + cache_read,
            cache_write=self.cache_write + cache_write,
        )

    def tool_batch(self, calls: int) -> tuple[Budget, frozenset[Cap]]:
        """B3: the tool calls of one response, checked together before any runs: a batch
        that would take the count past ``max_tool_calls`` is refused whole."""
        limit = self.caps.max_tool_calls
        if self.caps.capped(limit) and self.tool_calls + calls > limit:
            return self, frozenset({Cap.TOOL_CALLS})
        return replace(self, tool_calls=self.tool_calls + calls), frozenset()

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
        meters = {
            Cap.INPUT: (self.input, c.max_input_tokens),
            Cap.OUTPUT: (self.output, c.max_output_tokens),
            Cap.TOTAL: (self.input + self.output, c.max_total_tokens),
            Cap.REQUEST_INPUT: (self.request_input, c.max_request_input_tokens),
        }
        for cap, (meter, limit) in meters.items():
            if c.capped(limit) and (meter >= limit if c.at_cap else meter > limit):
                reached.add(cap)
        return frozenset(reached)

    def start(self) -> Budget:
        return replace(self, started=True)

    def reset(self) -> Budget:
        """B5: meters to zero; credit and clock untouched."""
        return replace(self, input=0, output=0, cache_read=0, cache_write=0)
