"""The concerns' shared suites (:mod:`ctxaudit.concerns`) for a target whose adapters
declare them: such a target writes no test of its own.

A target names its adapters by concern (``concerns = {"budget": "pkg.adapter:Budget"}``:
a callable that takes the resolved version and returns the concern's adapter) and
its suites with :func:`suites_for`; its suites are then ctxaudit's own files (here),
run with ``--concern-target=NAME --concern-spec=SPEC`` (the target's default
``suite_args``), which :func:`adapter` reads to build the adapter of the version
under test.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from ctxaudit import targets
from ctxaudit.outcomes import CouldNotCheck

HERE = Path(__file__).resolve().parent
#: concern -> its shared suite
SUITES = {
    "budget": HERE / "test_budget.py",
    "budget-runs": HERE / "test_budget_runs.py",
    "fold": HERE / "test_fold.py",
    "sessions": HERE / "test_sessions.py",
    "restore": HERE / "test_restore.py",
}
TARGET_OPTION, SPEC_OPTION = "--concern-target", "--concern-spec"


def suites_for(concerns: Mapping[str, str]) -> tuple[str, ...]:
    """The suites of a target whose adapters are ``concerns`` (each concern's shared
    suite); an unknown concern is an error where the target is defined."""
    unknown = sorted(set(concerns) - set(SUITES))
    if unknown:
        raise ValueError(f"no shared suite for {', '.join(unknown)} (known: {', '.join(SUITES)})")
    return tuple(str(SUITES[c]) for c in concerns)


def addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ctxaudit targets")
    group.addoption(
        TARGET_OPTION, default="", metavar="NAME",
        help="the target whose adapter a shared concern suite drives",
    )  # fmt: skip
    group.addoption(
        SPEC_OPTION, default="", metavar="SPEC",
        help="its version, as --target takes it (default: the target's own)",
    )  # fmt: skip


def adapter(config: pytest.Config, concern: str) -> Any:
    """The adapter of ``concern`` for the target and version the run names."""
    name = config.getoption(TARGET_OPTION)
    if not name:
        pytest.skip(f"a shared {concern} suite: give {TARGET_OPTION}=NAME (a target's audit does)")
    kind = targets.get(name)
    where = getattr(kind, "concerns", {}).get(concern)
    if where is None:
        raise pytest.UsageError(f"{name} declares no {concern} adapter (its `concerns`)")
    module, _, attribute = where.partition(":")
    try:  # an adapter that cannot be built checks nothing: never a finding
        factory = getattr(importlib.import_module(module), attribute)
        return factory(kind.resolve(config.getoption(SPEC_OPTION) or None))
    except Exception as exc:  # noqa: BLE001 - the adapter's own error, whatever it is
        raise CouldNotCheck(
            f"{name}'s {concern} adapter {where} could not be built: "
            f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
        ) from exc
