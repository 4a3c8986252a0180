"""Shared pytest setup: Hypothesis profiles (see ctxaudit/profiles.py)."""

from __future__ import annotations

from ctxaudit import profiles

_PROFILE = profiles.load_from_env()


def pytest_report_header(config):  # type: ignore[no-untyped-def]
    return f"ctxaudit: Hypothesis profile {_PROFILE!r} (override: --hypothesis-profile)"
