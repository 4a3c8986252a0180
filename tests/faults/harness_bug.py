"""A pytest plugin that injects a bug into ctxaudit's own gitreins adapter: driving the
loop raises a TypeError in ctxaudit's code (as a harness meeting a client shape it does
not know would). Loaded with ``-p tests.faults.harness_bug`` by the fault tests only."""

from __future__ import annotations

from typing import Any

import pytest


def _broken_start(self: Any) -> Any:
    raise TypeError("'async for' requires an object with __aiter__ method, got coroutine")


def pytest_configure(config: pytest.Config) -> None:
    from ctxaudit.targets.gitreins import loop as gitreins_loop

    gitreins_loop.LoopDriver.start = _broken_start  # type: ignore[method-assign]
