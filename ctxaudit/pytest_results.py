"""pytest plugin used by the audit: writes each test's outcome, the properties
it checks (``@pytest.mark.properties``), its failure text and, when ctxaudit could not
check it (``ctxaudit/pytest_outcomes.py``), why, to a JSON file named by
``CTXAUDIT_RESULTS``, with the Python and test libraries the process imported
(``ctxaudit/environment.py``)."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

_results: list[dict[str, Any]] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when != "call" and not (report.failed or report.skipped):
        return
    props: list[str] = []
    replayed: dict[str, Any] | None = None
    unchecked: str | None = None
    for name, args in getattr(report, "user_properties", []):
        if name == "properties":
            props = list(args)
        elif name == "replay":  # ctxaudit.replay: how the replay of a shrunk example went
            replayed = dict(args)
        elif name == "could_not_check":  # ctxaudit.pytest_outcomes: ctxaudit's own error
            unchecked = str(args)
    _results.append(
        {
            "nodeid": report.nodeid,
            "when": report.when,
            "outcome": report.outcome,
            "properties": props,
            "duration": report.duration,
            "longrepr": str(report.longrepr) if report.failed else "",
        }
        | ({"replay": replayed} if replayed is not None else {})
        | ({"could_not_check": unchecked} if unchecked is not None else {})
    )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    marker = item.get_closest_marker("properties")
    if marker is not None:
        item.user_properties.append(("properties", list(marker.args)))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    path = os.environ.get("CTXAUDIT_RESULTS")
    if path:
        from pathlib import Path

        from ctxaudit import atomic, environment

        # what this process imported: the report says when it is not what ctxaudit pins
        payload = {
            "exitstatus": int(exitstatus),
            "tests": _results,
            "imported": environment.imported(),
        }
        atomic.write_text(Path(path), json.dumps(payload, indent=1))
