"""The harness: model calls and their tokens counted against caps.

A cap of 0 or less is no cap. A token cap is reached at its value and reported after
the call that reached it; a call is refused once the calls are at their cap.
"""


class TokenMeter:
    def __init__(self, max_calls: int = 0, max_input: int = 0, max_output: int = 0) -> None:
        self.max_calls, self.max_input, self.max_output = max_calls, max_input, max_output
        self.calls = self.input = self.output = 0

    def record(self, prompt: int, completion: int) -> str | None:
        """Meter one model call; the cap it hits ("calls", "input", "output"), or None."""
        # the planted bug: one call too many is accepted at the cap (`>=` is right)
        if self.max_calls > 0 and self.calls > self.max_calls:
            return "calls"
        self.calls += 1
        self.input += prompt
        self.output += completion
        if self.max_input > 0 and self.input >= self.max_input:
            return "input"
        if self.max_output > 0 and self.output >= self.max_output:
            return "output"
        return None
