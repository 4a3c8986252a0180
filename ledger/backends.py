"""Inference backends: a scripted one for tests, an echo one for demos."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field

from ledger.items import item_text
from ledger.server import InferenceCall


@dataclass
class Script:
    """The answer a scripted backend gives to one call.

    With a ``gate``, the backend takes one permit from it before each chunk
    and one more before it finishes, so a test decides exactly how far
    inference has got (``gate.release()`` lets one more step happen).
    ``steps`` counts the steps taken: ``len(chunks) + 1`` means the backend
    has finished.
    """

    chunks: Sequence[str]
    gate: asyncio.Semaphore | None = None
    steps: int = 0


class ScriptedBackend:
    """Answers each call with the script ``script(call)`` returns; records every call."""

    def __init__(self, script: Callable[[InferenceCall], Script | Sequence[str]]) -> None:
        self._script = script
        self.calls: list[InferenceCall] = []

    async def stream(self, call: InferenceCall) -> AsyncIterator[str]:
        self.calls.append(call)
        script = self._script(call)
        if not isinstance(script, Script):
            script = Script(list(script))
        for chunk in script.chunks:
            if script.gate is not None:
                await script.gate.acquire()
            script.steps += 1
            yield chunk
        if script.gate is not None:
            await script.gate.acquire()
        script.steps += 1


@dataclass
class EchoBackend:
    """Echoes the last input item's text (``ledger.items.item_text``) back,
    ``chunk_size`` characters at a time; nothing for an empty text."""

    chunk_size: int = 16
    calls: list[InferenceCall] = field(default_factory=list)

    async def stream(self, call: InferenceCall) -> AsyncIterator[str]:
        self.calls.append(call)
        text = item_text(call.input[-1]) if call.input else ""
        for start in range(0, len(text), self.chunk_size):
            await asyncio.sleep(0)
            yield text[start : start + self.chunk_size]
