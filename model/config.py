"""Configuration the model runs under, and what configuration text means (B6, V8).

``Caps`` and ``ValveConfig`` are pydantic models: a bad value is rejected
with an error that names the field. The parse functions say what a cap
written in ``.gitreins/config.yaml`` means; they are the oracle for B6/V8,
not a copy of any target's parser.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_RATIO = 0.90
MAX_COMPACTIONS = 3

Unlimited = Annotated[int, Field(ge=-1)]


class Caps(BaseModel):
    """The caps (docs/properties.md, section 1); ``-1`` (or any value <= 0) means unlimited.

    The defaults are the specification's. A harness whose documented contract differs
    says so with the last three fields (docs/properties.md, section 1b).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_iterations: float = Field(default=-1.0, allow_inf_nan=False)
    max_seconds: float = Field(default=-1.0, allow_inf_nan=False)
    max_input_tokens: Unlimited = -1
    max_output_tokens: Unlimited = -1
    tool_call_weight: float = Field(default=0.1, ge=0, allow_inf_nan=False)
    max_total_tokens: Unlimited = -1  # the input and output meters together
    max_request_input_tokens: Unlimited = -1  # one call's input, not the sum
    max_tool_calls: Unlimited = -1  # tool calls run; a batch that would pass it is refused whole
    #: a token cap is reached at the cap (``>=``); False: only once past it (``>``)
    at_cap: bool = True
    #: a cap of 0 allows nothing (only -1 means unlimited); False: 0 is no cap
    zero_is_cap: bool = False
    #: an LLM call is also refused while a cumulative token cap is reached, not only
    #: while the credit is at its cap
    refuse_over_cap: bool = False

    def capped(self, limit: float) -> bool:
        return limit > 0 or (self.zero_is_cap and limit == 0)

    def spec(self) -> dict[str, float]:
        """The caps the specification names (what gitreins' ``EvalCap`` takes)."""
        return self.model_dump(include=set(SPEC_CAPS))


#: the caps the specification names; the other fields of ``Caps`` are a harness's own
SPEC_CAPS = ("max_iterations", "max_seconds", "max_input_tokens", "max_output_tokens",
             "tool_call_weight")  # fmt: skip


class ValveConfig(BaseModel):
    """The valve's settings (docs/properties.md, section 2); the ratio is already
    valid (see ``valve_ratio``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    caps: Caps
    ratio: float = Field(default=DEFAULT_RATIO, gt=0, lt=1)
    criteria: int = Field(default=3, ge=0)


class ConfigError(ValueError):
    """A configuration value that does not say what its key needs; names the key
    (V8: a number; B6: a whole number of tokens)."""

    def __init__(self, key: str, value: object, expected: str = "a number") -> None:
        super().__init__(f"{key}: expected {expected}, got {value!r}")
        self.key = key


def valve_ratio(raw: object, key: str = "compaction_threshold") -> tuple[float, bool]:
    """V8: the ratio a configured value stands for, and whether to warn.

    A number, or a string that reads as one, is accepted; outside (0, 1) it is
    replaced by 0.90 with a warning. Anything else raises ``ConfigError``.
    """
    if isinstance(raw, bool) or not isinstance(raw, int | float | str):
        raise ConfigError(key, raw)
    if isinstance(raw, str):
        try:
            value = float(raw.strip())
        except ValueError:
            raise ConfigError(key, raw) from None
    else:
        value = float(raw)
    if math.isnan(value) or not 0 < value < 1:
        return DEFAULT_RATIO, True
    return value, False


# B6: what cap text says. Numbers may carry a decimal point; units are those
# the gitreins docs show (k/M for tokens; s/m/h and their long forms for time).
_NUMBER = r"(\d+(?:\.\d+)?)"
_TOKENS = re.compile(rf"^{_NUMBER}\s*([kKmM]?)$")
_SECONDS = {"s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1}
_SECONDS |= {"m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60}
_SECONDS |= {"h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600}
_TIME = re.compile(rf"^{_NUMBER}\s*([a-z]+)$")


def parse_tokens(text: str) -> int | None:
    """A token count: '200k' is 200000, '1.5M' 1500000. Decimal arithmetic, so
    '2.3k' is 2300; text that names no whole count ('1.5') is not a cap."""
    m = _TOKENS.match(text.strip())
    if not m:
        return None
    value = Decimal(m.group(1)) * {"": 1, "k": 1_000, "m": 1_000_000}[m.group(2).lower()]
    return int(value) if value == value.to_integral_value() else None


def token_cap(text: str, key: str) -> int:
    """B6: the token cap ``key`` is given as ``text``. Text that does not say a
    whole number of tokens ('1.5', '0.0001k') is a configuration error that
    names the key, never a silent rounding."""
    tokens = parse_tokens(text)
    if tokens is None:
        raise ConfigError(key, text, "a whole number of tokens")
    return tokens


def parse_seconds(text: str) -> float | None:
    m = _TIME.match(text.strip())
    if not m or m.group(2) not in _SECONDS:
        return None
    return float(Decimal(m.group(1)) * _SECONDS[m.group(2)])


def parse_iterations(value: object) -> float | None:
    """An iteration cap: a number (fractional allowed) or its text; <= 0 or
    'unlimited' mean no cap (-1)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if value > 0 else -1.0
    return _iterations(str(value).strip())


def _iterations(text: str) -> float | None:
    if text.lower() in ("unlimited", "none"):
        return -1.0
    if not text.lstrip("-").isdigit():
        return None
    return float(text) if int(text) > 0 else -1.0


def parse_legacy(text: str) -> dict[str, float] | None:
    """The legacy combined cap string, in the forms the gitreins docs show:
    ``100/30m/200k/50k`` (iterations/time/input/output), ``100/30m``,
    ``200k/50k`` (input/output), ``100`` (iterations), ``30m`` (time), and
    ``-1``/``0``/``unlimited`` (no iteration cap). Returns the caps the text
    names (a field it does not name is not said by it); anything else: None.
    A token part that is not a whole number of tokens raises ``ConfigError``
    naming the key ``cap`` (B6)."""
    parts = [p.strip() for p in text.strip().split("/")]
    caps: dict[str, float] = {}
    if len(parts) == 1:
        iterations, seconds = _iterations(parts[0]), parse_seconds(parts[0])
        if iterations is not None:
            caps["max_iterations"] = iterations
        elif seconds is not None:
            caps["max_seconds"] = seconds
        else:
            return None
    elif len(parts) == 2 and _iterations(parts[0]) is None:
        caps |= {"max_input_tokens": token_cap(parts[0], "cap")}
        caps |= {"max_output_tokens": token_cap(parts[1], "cap")}
    elif len(parts) in (2, 4):
        iterations, seconds = _iterations(parts[0]), parse_seconds(parts[1])
        if iterations is None or seconds is None:
            return None
        caps |= {"max_iterations": iterations, "max_seconds": seconds}
        if len(parts) == 4:
            caps |= {"max_input_tokens": token_cap(parts[2], "cap")}
            caps |= {"max_output_tokens": token_cap(parts[3], "cap")}
    else:
        return None
    return caps
