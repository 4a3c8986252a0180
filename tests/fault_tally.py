"""The tally of the fault-injection tests: each injects a fault on purpose (an interrupt,
a killed child, a corrupt cache, a truncated report, a full disk, a harness error on a
real tree) and checks that ctxaudit ends with the right one of the three outcomes and
that nothing is lost or wrongly reused. ``@pytest.mark.fault(kind)`` names the fault;
most live in ``tests/faults/``, the rest beside what they check. A plugin of this
repository's suites (``tests/conftest.py``).

With ``CTXAUDIT_FAULT_REPORT=FILE`` the run writes its tally there (markdown): faults
injected, survived (the test passed: the right outcome, nothing lost), verdicts wrong
(it failed), per kind. Under pytest-xdist the controller writes it (the workers' reports
reach it), never a worker.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

_seen: dict[str, tuple[str, str]] = {}  # nodeid -> (kind, outcome)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    marker = item.get_closest_marker("fault")
    if marker is not None:
        item.user_properties.append(("fault", str(marker.args[0]) if marker.args else "?"))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    kind = dict(report.user_properties).get("fault")
    if kind is None:
        return
    if report.when == "call" or (report.when == "setup" and not report.passed):
        outcome = "error" if report.failed and report.when != "call" else report.outcome
        _seen[report.nodeid] = (str(kind), outcome)
    elif report.when == "teardown" and report.failed:
        _seen[report.nodeid] = (str(kind), "error")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    path = os.environ.get("CTXAUDIT_FAULT_REPORT")
    if not path or not _seen or hasattr(session.config, "workerinput"):
        return
    from ctxaudit import atomic
    from ctxaudit.suite import commit

    shown = Path(path).resolve()
    root = Path(__file__).resolve().parents[1]
    if shown.is_relative_to(root):  # the command as run from the checkout, no machine path
        shown = shown.relative_to(root)
    by_kind: dict[str, Counter[str]] = {}
    for kind, outcome in _seen.values():
        by_kind.setdefault(kind, Counter())[outcome] += 1
    total: Counter[str] = sum(by_kind.values(), Counter())
    lines = [
        "# Fault injection",
        "",
        f"ctxaudit `{commit()}`: `CTXAUDIT_FAULT_REPORT={shown} bin/ctxaudit test -m fault"
        " -n 2` (every test marked with the fault it injects). A fault *survived* when the"
        " test passed: ctxaudit ended with the"
        " right one of the three outcomes and nothing was lost or wrongly reused; a"
        " *wrong verdict* is a failed test; *not run* a skipped one (its reason is in the"
        " run's output).",
        "",
        f"**Faults injected: {sum(total.values()) - total['skipped']}, survived: "
        f"{total['passed']}, verdicts wrong: {total['failed'] + total['error']}** "
        f"(not run: {total['skipped']}).",
        "",
        "| fault | injected | survived | wrong | not run |",
        "|---|---|---|---|---|",
    ]
    for kind in sorted(by_kind):
        c = by_kind[kind]
        injected = sum(c.values()) - c["skipped"]
        lines.append(
            f"| {kind} | {injected} | {c['passed']} | {c['failed'] + c['error']} | {c['skipped']} |"
        )
    atomic.write_text(Path(path), "\n".join(lines) + "\n")
