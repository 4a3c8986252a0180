"""The wall clock the harness runs a tree under (:class:`SteppingClock`)."""

from __future__ import annotations

import time


class SteppingClock:
    """``time.time`` that moves on by :attr:`STEP` seconds at every reading.

    OGX stamps each stored conversation item with ``int(time.time()) + i``
    (``i`` its place in the write) and lists items ordered by that stamp. Two
    writes in the same second (a summary marker and the turn after it; two
    turns when the fake LLM answers at once) get equal stamps, and the listing
    interleaves them. A real LLM takes seconds, so the suite makes the clock
    take them instead: every reading is at least ``STEP`` seconds after the
    previous one, and writes of up to ``STEP`` items never share a stamp. The
    monotonic clock (timeouts, asyncio) is untouched.
    """

    STEP = 10.0

    def __init__(self) -> None:
        self.readings = 0
        self._real = time.time

    def __call__(self) -> float:
        self.readings += 1
        return self._real() + self.STEP * self.readings

    def install(self) -> None:
        time.time = self

    def remove(self) -> None:
        time.time = self._real
