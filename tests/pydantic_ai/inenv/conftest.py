"""Tests that run inside a pydantic-ai release's own environment.

``tests/pydantic_ai/test_pydantic_ai.py`` (and the audit) build the environment and run
this folder there, with ``CTXAUDIT_PYDANTIC_AI_TREE`` naming the tree (first on
``sys.path``) and ``CTXAUDIT_PYDANTIC_AI_VERSION`` its version. Run anywhere else
(ctxaudit's own interpreter), the folder collects nothing.
"""

from __future__ import annotations

import os

import pytest

TREE = os.environ.get("CTXAUDIT_PYDANTIC_AI_TREE", "")
VERSION = os.environ.get("CTXAUDIT_PYDANTIC_AI_VERSION", "")
if not TREE:
    collect_ignore_glob = ["*.py"]


def pytest_report_header(config: pytest.Config) -> str:
    return f"ctxaudit: pydantic-ai target {VERSION} ({TREE})"
