"""Why a peer suite's tests cannot run: a pytest plugin and the summary of what it saw.

The peer run (``_run_peer`` in ``mutation/__init__.py``) loads this plugin with
``-p mutation.peer_outcomes --peer-outcomes PATH``. In the baseline (the run on the
unmutated tree, where ``MUTANT_UNDER_TEST`` is unset; see mutation/README.md,
"Subprocesses") it appends one JSON line per test that did not pass to PATH:
``{"test", "outcome", "reason"}``, where outcome is ``error`` (setup or teardown
failed: a missing fixture, a broken import), ``failed`` (the test body failed) or
``skipped`` (the test skipped itself: a missing tool, an opt-in environment variable).
Mutant runs write nothing: there a failure is a kill, not a reason.

:func:`summarize` groups those lines by outcome and reason for the report.
"""

from __future__ import annotations

import importlib
import itertools
import json
import os
from collections.abc import Generator, Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

OPTION = "--peer-outcomes"
#: a reason is cut to this many characters (reports group tests by it)
REASON_CHARS = 160
#: outcomes in the order a report lists them
OUTCOMES = ("error", "failed", "skipped")


def plugin_args(path: Path) -> tuple[str, ...]:
    """The pytest arguments that load this plugin and have it write to ``path``."""
    return ("-p", __name__, OPTION, str(path))


def plugins_supplied(pytest_args: Sequence[str]) -> list[dict[str, Any]]:
    """The plugins ``-p MODULE`` in ``pytest_args`` loads (not this one, not ``no:X``), each
    with the fixtures it supplies: its ``SUPPLIED`` names when it has them."""
    out: list[dict[str, Any]] = []
    for flag, module in itertools.pairwise(pytest_args):
        if flag != "-p" or module.startswith("no:") or module == __name__:
            continue
        try:
            names = list(getattr(importlib.import_module(module), "SUPPLIED", ()))
        except ImportError:
            names = []
        out.append({"module": module, "fixtures": names})
    return out


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        OPTION,
        metavar="PATH",
        default=None,
        help="append why each test did not pass in the baseline to PATH (JSON lines)",
    )


def reason_of(report: pytest.TestReport) -> str:
    """One line saying why ``report`` did not pass."""
    longrepr: Any = report.longrepr
    if report.skipped and isinstance(longrepr, tuple) and len(longrepr) == 3:
        text = str(longrepr[2]).removeprefix("Skipped: ")
    elif hasattr(longrepr, "errorstring"):  # a fixture lookup error
        text = str(longrepr.errorstring).strip().splitlines()[-1]
    elif getattr(longrepr, "reprcrash", None) is not None:
        text = str(longrepr.reprcrash.message)
    else:
        lines = [ln for ln in str(longrepr).strip().splitlines() if ln.strip()]
        text = lines[-1] if lines else "no reason given"
    text = " ".join(text.split())
    return text if len(text) <= REASON_CHARS else text[: REASON_CHARS - 3] + "..."


def outcome_of(report: pytest.TestReport) -> str | None:
    """``error``, ``failed``, ``skipped`` or None (the phase passed)."""
    if report.skipped:
        return "skipped"
    if report.failed:
        return "failed" if report.when == "call" else "error"
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any]:
    outcome = yield
    path = item.config.getoption(OPTION)
    if not path or os.environ.get("MUTANT_UNDER_TEST"):
        return
    report: pytest.TestReport = outcome.get_result()
    kind = outcome_of(report)
    if kind is None:
        return
    line = {"test": item.nodeid, "outcome": kind, "reason": reason_of(report)}
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")


def read(path: Path) -> list[dict[str, str]]:
    """The records the plugin wrote (none when the file is missing); first one per test."""
    if not path.is_file():
        return []
    seen: dict[str, dict[str, str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            seen.setdefault(rec["test"], rec)
    return list(seen.values())


def summarize(records: Iterable[dict[str, str]]) -> dict[str, Any]:
    """Counts per outcome and the tests grouped by (outcome, reason), largest group first."""
    groups: dict[tuple[str, str], list[str]] = {}
    for rec in records:
        groups.setdefault((rec["outcome"], rec["reason"]), []).append(rec["test"])
    ordered = sorted(groups.items(), key=lambda kv: (OUTCOMES.index(kv[0][0]), -len(kv[1]), kv[0]))
    return {
        "counts": {o: sum(len(t) for (k, _r), t in groups.items() if k == o) for o in OUTCOMES},
        "reasons": [
            {"outcome": o, "reason": r, "count": len(tests), "tests": sorted(tests)}
            for (o, r), tests in ordered
        ],
    }
