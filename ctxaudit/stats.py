"""Run statistics for benchmarks: how many examples and steps a stateful
suite ran. Machines call :func:`example_done` in teardown; the session hook
in tests/conftest.py writes the totals to ``CTXAUDIT_STATS`` when set."""

from __future__ import annotations

import json
import os
from collections import defaultdict

_steps: dict[str, list[int]] = defaultdict(list)


def example_done(machine: str, steps: int) -> None:
    _steps[machine].append(steps)


def dump() -> None:
    path = os.environ.get("CTXAUDIT_STATS")
    if not path:
        return
    out = {
        name: {"examples": len(s), "steps": sum(s), "steps_per_example": sum(s) / max(1, len(s))}
        for name, s in _steps.items()
    }
    from pathlib import Path

    from ctxaudit import atomic

    atomic.write_text(Path(path), json.dumps(out, indent=1))
