"""Compaction configuration (pydantic; errors name the offending field)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class ConfigError(ValueError):
    """A configuration value is missing or invalid; the message names the field."""


class CompactionConfig(BaseModel):
    """When and how the ledger compacts (C1 and section 3 of docs/properties.md).

    - ``context_window``: tokens the model accepts (> 0).
    - ``threshold_ratio``: fraction of the window in (0, 1] over which a
      request is compacted.
    - ``token_floor``: a request is never compacted at or under this many
      tokens (>= 0), whatever the ratio says.
    - ``buffer_turns``: newest turns kept verbatim when compacting (>= 0).

    Values are strict: ``True`` is not an int and ``"0.5"`` is not a ratio.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    context_window: int = Field(gt=0)
    threshold_ratio: float = Field(gt=0.0, le=1.0)
    token_floor: int = Field(default=0, ge=0)
    buffer_turns: int = Field(default=2, ge=0)

    @property
    def threshold(self) -> float:
        """``threshold_ratio * context_window``, the ratio's side of C1."""
        return self.threshold_ratio * self.context_window

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> CompactionConfig:
        """Build from plain data (a config file's section); raise :class:`ConfigError`."""
        try:
            return cls.model_validate(dict(values))
        except ValidationError as exc:
            problems = []
            for error in exc.errors():
                # a field's error: the input is a dict, and the model has no validator
                # of its own, so every error is located at a key
                field = ".".join(str(part) for part in error["loc"])
                problems.append(f"{field}: {error['msg']} (got {error.get('input')!r})")
            raise ConfigError("invalid compaction configuration: " + "; ".join(problems)) from None
