"""Tests that run inside a google-adk release's own environment.

``tests/google_adk/test_google_adk.py`` (and the audit) build the environment and run
this folder there, with ``CTXAUDIT_GOOGLE_ADK_TREE`` naming the tree (first on
``sys.path``) and ``CTXAUDIT_GOOGLE_ADK_VERSION`` its version. Asked for from
ctxaudit's own interpreter (a report's command), it runs there:
``tests/inenv_route.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.inenv_route import route

TREE = os.environ.get("CTXAUDIT_GOOGLE_ADK_TREE", "")
VERSION = os.environ.get("CTXAUDIT_GOOGLE_ADK_VERSION", "")
if not TREE:
    collect_ignore_glob = ["*.py"]


def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """Asked for from ctxaudit's own interpreter (a report's command): run there."""
    return route(config, "google-adk", Path(__file__).parent, "CTXAUDIT_GOOGLE_ADK_TREE")


def pytest_report_header(config: pytest.Config) -> str:
    return f"ctxaudit: google-adk target {VERSION} ({TREE})"
