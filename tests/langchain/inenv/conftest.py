"""Tests that run inside a langchain release's own environment.

``tests/langchain/test_langchain.py`` (and the audit) build the environment and run this
folder there, with ``CTXAUDIT_LANGCHAIN_TREE`` naming the tree (first on ``sys.path``)
and ``CTXAUDIT_LANGCHAIN_VERSION`` its version. Run anywhere else (ctxaudit's own
interpreter), the folder collects nothing.
"""

from __future__ import annotations

import os

import pytest

TREE = os.environ.get("CTXAUDIT_LANGCHAIN_TREE", "")
VERSION = os.environ.get("CTXAUDIT_LANGCHAIN_VERSION", "")
if not TREE:
    collect_ignore_glob = ["*.py"]


def pytest_report_header(config: pytest.Config) -> str:
    return f"ctxaudit: langchain target {VERSION} ({TREE})"


@pytest.fixture(scope="session")
def version() -> str:
    return VERSION
