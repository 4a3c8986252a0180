"""Conversation items: their kinds, their JSON shape, and input normalisation.

A conversation is an ordered list of items. Each item has a *kind* (stored in
its own column) and a JSON object as its *content*:

- ``input``: an item the user sent, e.g. ``{"type": "message", "role": "user",
  "content": "hello"}``. A request whose ``input`` is a string carries exactly
  one such user message.
- ``output``: an item the model produced. A streamed or blocking answer is one
  assistant message whose ``content`` is the concatenated text and whose
  ``status`` is ``"completed"``; an interrupted answer has status
  ``"incomplete"`` and holds the text streamed so far; a shield's answer is an
  assistant message carrying ``refusal`` instead of ``content``.
- ``summary``: a summary marker written by compaction, covering the turns
  ``first_turn`` .. ``last_turn`` (1-based, inclusive) of the conversation.

Contents are compared and estimated through :func:`canonical_json`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeAlias

Kind: TypeAlias = Literal["input", "output", "summary"]
JSONObject: TypeAlias = dict[str, Any]

INPUT: Kind = "input"
OUTPUT: Kind = "output"
SUMMARY: Kind = "summary"
KINDS: frozenset[str] = frozenset({INPUT, OUTPUT, SUMMARY})

COMPLETED = "completed"
INCOMPLETE = "incomplete"


def canonical_json(value: Any) -> str:
    """The one serialisation of a JSON value: sorted keys, no spaces, UTF-8 text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def user_message(text: str) -> JSONObject:
    return {"type": "message", "role": "user", "content": text}


def assistant_message(text: str, *, status: str = COMPLETED) -> JSONObject:
    return {"type": "message", "role": "assistant", "status": status, "content": text}


def refusal_message(refusal: str) -> JSONObject:
    return {"type": "message", "role": "assistant", "status": COMPLETED, "refusal": refusal}


def summary_marker(first_turn: int, last_turn: int, text: str) -> JSONObject:
    if not 1 <= first_turn <= last_turn:
        raise ValueError(
            f"summary marker must cover turns 1 <= first <= last, got {first_turn}..{last_turn}"
        )
    return {"type": "summary", "first_turn": first_turn, "last_turn": last_turn, "text": text}


def item_text(item: Mapping[str, Any]) -> str:
    """The text an item carries: its ``content`` when that is a string, else the text of
    its content parts (the Responses API's ``[{"type": "input_text", "text": ...}]``),
    joined with spaces; "" when it carries none."""
    content = item.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [p.get("text") for p in content if isinstance(p, Mapping)]
        return " ".join(t for t in texts if isinstance(t, str))
    return ""


def is_summary(content: Mapping[str, Any]) -> bool:
    return content.get("type") == "summary"


def normalize_input(value: str | Sequence[Mapping[str, Any]]) -> list[JSONObject]:
    """The input items a request carries.

    A string becomes one user message. A list of items is copied as is; each
    item must be a JSON object with a string ``type``. An empty list is refused:
    a turn without input is not a turn.
    """
    if isinstance(value, str):
        return [user_message(value)]
    if not isinstance(value, Sequence):
        raise TypeError(f"input must be a string or a list of items, not {type(value).__name__}")
    items: list[JSONObject] = []
    for index, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise TypeError(f"input[{index}] must be a JSON object, not {type(item).__name__}")
        if not isinstance(item.get("type"), str):
            raise ValueError(f"input[{index}] has no string 'type'")
        copied = dict(item)
        canonical_json(copied)  # raises TypeError on values JSON cannot carry
        items.append(copied)
    if not items:
        raise ValueError("input must not be empty")
    return items


def output_from_chunks(chunks: Sequence[str], *, status: str = COMPLETED) -> list[JSONObject]:
    """Output items of an answer whose text arrived as ``chunks``.

    A completed answer is always one assistant message (its text may be
    empty). An incomplete answer with nothing streamed has no output item.
    """
    if status == INCOMPLETE and not chunks:
        return []
    return [assistant_message("".join(chunks), status=status)]
