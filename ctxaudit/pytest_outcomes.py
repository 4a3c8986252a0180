"""pytest plugin: a test that fails because ctxaudit could not check the target is an
*error*, not a failure (``ctxaudit/outcomes.py`` tells them apart).

Such a test is shown as ERROR with a section saying why ctxaudit could not check it,
and carries ``("could_not_check", why)`` in its report's ``user_properties``, which
the audit's results (``ctxaudit/pytest_results.py``) record. A setup or teardown error
(a fixture that cannot build a tree's environment, start a service) is one too.
A failure that arises from what the target did stays a failure.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from ctxaudit.outcomes import could_not_check

KEY = "could_not_check"


def reason(report: pytest.TestReport) -> str | None:
    """Why ctxaudit could not check this test (None: it could)."""
    for name, value in getattr(report, "user_properties", ()):
        if name == KEY:
            return str(value)
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[Any]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if not report.failed or call.excinfo is None or hasattr(report, "wasxfail"):
        return report
    if report.when == "call":
        why = could_not_check(call.excinfo.value)
    else:
        why = f"error in {report.when}: {call.excinfo.typename}: {call.excinfo.value}"
    if why is not None:
        report.user_properties.append((KEY, why))
        report.sections.append(("ctxaudit could not check this test", why))
    return report


def pytest_report_teststatus(
    report: pytest.TestReport, config: pytest.Config
) -> tuple[str, str, tuple[str, dict[str, bool]]] | None:
    if report.when == "call" and report.failed and reason(report) is not None:
        return "error", "E", ("ERROR (could not check)", {"red": True})
    return None
