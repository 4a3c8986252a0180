"""Where this suite's CPU goes, per test: with ``CTXAUDIT_CPU_TALLY=FILE`` each test
appends one JSON line to ``FILE`` (its node id, the CPU seconds of this process and of
the children it waited for while the test ran, and its wall seconds).

Loaded, the suite's wall time is about its CPU time (the two cores are shared with
others), so a cut must come off CPU; pytest's ``--durations`` shows wall time, where a
test waiting on its children and a test computing look the same. A child counts once
it is waited for: one that outlives its test (a warm server, ``ctxaudit/warm.py``, and
the runs it forks) counts for the test that ends it, or for none; with
``CTXAUDIT_WARM=0`` every run is a child of the test that waits for it (each then pays
its cold start). Off unless the variable is set; nothing is asserted.
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Iterator

import pytest


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    # taken out of the environment while the test runs: the pytest processes it starts
    # (a target's suites) count inside it, not as tests of their own
    out = os.environ.pop("CTXAUDIT_CPU_TALLY", "")
    if not out:
        yield
        return
    cpu, wall = _cpu(), time.monotonic()
    try:
        yield
    finally:
        os.environ["CTXAUDIT_CPU_TALLY"] = out
    line = {"test": item.nodeid, "cpu": round(_cpu() - cpu, 2)}
    line["wall"] = round(time.monotonic() - wall, 2)
    with open(out, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(line) + "\n")
