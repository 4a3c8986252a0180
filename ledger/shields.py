"""Shields: input checks the ``responses`` endpoint runs before inference."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ledger.items import item_text


class Shield(Protocol):
    def check(self, input_items: Sequence[Mapping[str, Any]]) -> str | None:
        """The refusal text when the input is blocked, else ``None``."""
        ...


@dataclass(frozen=True)
class KeywordShield:
    """Blocks any input whose text contains ``keyword`` (case-insensitive), in a string
    content or in a content part (``ledger.items.item_text``)."""

    keyword: str
    refusal: str = "I can't help with that request."

    def check(self, input_items: Sequence[Mapping[str, Any]]) -> str | None:
        needle = self.keyword.casefold()
        if any(needle in item_text(item).casefold() for item in input_items):
            return self.refusal
        return None
