"""Tests that run inside an openai-agents release's own environment.

``tests/openai_agents/test_openai_agents.py`` (and the audit) build the environment and
run this folder there, with ``CTXAUDIT_OPENAI_AGENTS_TREE`` naming the tree (first on
``sys.path``) and ``CTXAUDIT_OPENAI_AGENTS_VERSION`` its version. Run anywhere else
(ctxaudit's own interpreter), the folder collects nothing.
"""

from __future__ import annotations

import os

import pytest

TREE = os.environ.get("CTXAUDIT_OPENAI_AGENTS_TREE", "")
VERSION = os.environ.get("CTXAUDIT_OPENAI_AGENTS_VERSION", "")
if not TREE:
    collect_ignore_glob = ["*.py"]


def pytest_report_header(config: pytest.Config) -> str:
    return f"ctxaudit: openai-agents target {VERSION} ({TREE})"


@pytest.fixture(scope="session")
def version() -> str:
    return VERSION
