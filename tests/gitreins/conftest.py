from __future__ import annotations

import pytest

from ctxaudit.targets.gitreins import GitreinsModules, load, resolve


@pytest.fixture(scope="session")
def gitreins(pytestconfig: pytest.Config) -> GitreinsModules:
    """The gitreins target's modules (``--gitreins``), imported once per process."""
    return load(resolve(pytestconfig.getoption("--gitreins")))
