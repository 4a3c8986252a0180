"""Tests that run inside a strands-agents release's own environment.

``tests/strands_agents/test_strands_agents.py`` (and the audit) build the environment and run
this folder there, with ``CTXAUDIT_STRANDS_AGENTS_TREE`` naming the tree (first on
``sys.path``) and ``CTXAUDIT_STRANDS_AGENTS_VERSION`` its version. Asked for from
ctxaudit's own interpreter (a report's command), it runs there:
``tests/inenv_route.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.inenv_route import route

TREE = os.environ.get("CTXAUDIT_STRANDS_AGENTS_TREE", "")
VERSION = os.environ.get("CTXAUDIT_STRANDS_AGENTS_VERSION", "")
if not TREE:
    collect_ignore_glob = ["*.py"]


def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """Asked for from ctxaudit's own interpreter (a report's command): run there."""
    return route(config, "strands-agents", Path(__file__).parent, "CTXAUDIT_STRANDS_AGENTS_TREE")


def pytest_report_header(config: pytest.Config) -> str:
    return f"ctxaudit: strands-agents target {VERSION} ({TREE})"
