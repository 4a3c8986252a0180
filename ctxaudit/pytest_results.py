"""pytest plugin used by the audit: writes each test's outcome, the properties
it checks (``@pytest.mark.properties``), its failure text and, when ctxaudit could not
check it (``ctxaudit/pytest_outcomes.py``), why, to a JSON file named by
``CTXAUDIT_RESULTS``, with the Python and test libraries the process imported
(``ctxaudit/environment.py``) and each collection error in one line (what did not
import, and where)."""

from __future__ import annotations

import json
import os
import re
from typing import Any

import pytest

_results: list[dict[str, Any]] = []
_collect_errors: list[dict[str, str]] = []


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


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        _collect_errors.append({"nodeid": report.nodeid, "why": collect_error(report)})


def collect_error(report: pytest.CollectReport) -> str:
    """A collection error as one line: the exception and where it was raised (the
    module that did not import, the fixture file), not pytest's "1 error during
    collection"."""
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None and crash.message:
        return f"{crash.message.splitlines()[0]} (raised at {crash.path}:{crash.lineno})"
    # an import error's text (pytest makes it a string): its last ``E`` line is the
    # exception, the last ``path:line: in`` line before it where it was raised
    lines = str(report.longrepr).splitlines()
    errors = [i for i, ln in enumerate(lines) if ln.startswith("E ")]
    if not errors:  # pytest's own words ("import file mismatch:" and what it found)
        said = " ".join(ln.strip() for ln in lines if ln.strip())
        said = said if len(said) <= 300 else said[:297] + "..."
        return f"{said or 'no message'} (collecting {report.nodeid or 'the suite'})"
    message = lines[errors[-1]][1:].strip()
    where = [ln for ln in lines[: errors[-1]] if re.match(r"^\S+:\d+: in ", ln)]
    at = where[-1].rsplit(": in ", 1)[0] if where else report.nodeid or "the suite"
    return f"{message} (raised at {at})"


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
            "collect_errors": _collect_errors,
            "imported": environment.imported(),
        }
        atomic.write_text(Path(path), json.dumps(payload, indent=1))
