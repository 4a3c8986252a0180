"""Helpers shared by the settlement tests: a private event loop, a stream client, fixtures.

Named without a ``test_`` prefix so pytest does not collect it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from typing import Any, TypeVar

from ledger.service import StreamEvent

T = TypeVar("T")

INSTRUCTIONS = "Answer briefly."
UNSAFE = "[unsafe]"
REFUSAL = "Refused by the test shield."


def summarize(items: Sequence[Mapping[str, Any]]) -> str:
    """The summarizer given to both the ledger and the model (deterministic, short)."""
    words = []
    for item in items:
        text = item.get("content", item.get("refusal", ""))
        if not isinstance(text, str):  # content parts: a JSON value, whatever its key order
            text = json.dumps(text, sort_keys=True)
        words.append(text.split(" ")[0][:8] if text else "-")
    return f"{len(items)} items: " + ",".join(words)


class Loop:
    """A private asyncio loop the tests drive step by step (no plugin needed)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(coro)

    def spin(self, until: Callable[[], bool] | None = None, *, max_rounds: int = 60) -> None:
        """Let every ready task run: until ``until()`` holds, or ``max_rounds`` loop rounds."""

        async def rounds() -> None:
            for _ in range(max_rounds):
                if until is not None and until():
                    return
                await asyncio.sleep(0)

        self.loop.run_until_complete(rounds())

    def close(self) -> None:
        pending = [task for task in asyncio.all_tasks(self.loop) if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        self.loop.close()


class StreamClient:
    """A client reading a stream one event per :meth:`request`, as an HTTP client would.

    It runs as its own task. Cancelling it while it waits between requests
    closes the stream (``aclose``: GeneratorExit at the stream's ``yield``);
    cancelling it while it waits for an event cancels the stream inside its
    ``await`` (CancelledError). Both are "the client went away".
    """

    def __init__(self, loop: Loop, stream: AsyncIterator[StreamEvent]) -> None:
        self._stream = stream
        self.events: list[StreamEvent] = []
        self.finished = False
        self.error: BaseException | None = None
        self.requested = 0
        self._commands: asyncio.Queue[None] = asyncio.Queue()
        self.task = loop.loop.create_task(self._run())

    async def _run(self) -> None:
        try:
            while True:
                await self._commands.get()
                try:
                    event = await anext(self._stream)
                except StopAsyncIteration:
                    self.finished = True
                    return
                self.events.append(event)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # surfaced by the tests' invariants
            self.error = exc
        finally:
            closer = getattr(self._stream, "aclose", None)
            if closer is not None:
                await closer()

    def request(self) -> None:
        self.requested += 1
        self._commands.put_nowait(None)

    @property
    def alive(self) -> bool:
        return not self.task.done()

    @property
    def answered(self) -> int:
        return len(self.events) + int(self.finished)

    @property
    def waiting(self) -> bool:
        """A request is outstanding: the client is inside the stream, awaiting an event."""
        return self.alive and self.requested > self.answered

    def types(self) -> list[str]:
        return [event.type for event in self.events]
