"""Shields: input checks the ``responses`` endpoint runs before inference."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


class Shield(Protocol):
    def check(self, input_items: Sequence[Mapping[str, Any]]) -> str | None:
        """The refusal text when the input is blocked, else ``None``."""
        ...


@dataclass(frozen=True)
class KeywordShield:
    """Blocks any input whose user text contains ``keyword`` (case-insensitive)."""

    keyword: str
    refusal: str = "I can't help with that request."

    def check(self, input_items: Sequence[Mapping[str, Any]]) -> str | None:
        needle = self.keyword.casefold()
        for item in input_items:
            text = item.get("content")
            if isinstance(text, str) and needle in text.casefold():
                return self.refusal
        return None
