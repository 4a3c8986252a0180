"""Tests that run inside a pydantic-ai release's own environment.

``tests/pydantic_ai/test_pydantic_ai.py`` (and the audit) build the environment and run
this folder there, with ``CTXAUDIT_PYDANTIC_AI_TREE`` naming the tree (first on
``sys.path``) and ``CTXAUDIT_PYDANTIC_AI_VERSION`` its version. Asked for from
ctxaudit's own interpreter (a report's command), it runs there:
``tests/inenv_route.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.inenv_route import route

TREE = os.environ.get("CTXAUDIT_PYDANTIC_AI_TREE", "")
VERSION = os.environ.get("CTXAUDIT_PYDANTIC_AI_VERSION", "")
if not TREE:
    collect_ignore_glob = ["*.py"]


def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """Asked for from ctxaudit's own interpreter (a report's command): run there."""
    return route(config, "pydantic-ai", Path(__file__).parent, "CTXAUDIT_PYDANTIC_AI_TREE")


def pytest_report_header(config: pytest.Config) -> str:
    return f"ctxaudit: pydantic-ai target {VERSION} ({TREE})"
