from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from ctxaudit.targets.gitreins.tree import GitreinsModules, load, resolve


@pytest.fixture(scope="session")
def gitreins(pytestconfig: pytest.Config) -> GitreinsModules:
    """The gitreins target's modules (``--gitreins``), imported once per process."""
    return load(resolve(pytestconfig.getoption("--gitreins")))


@pytest.fixture(scope="package", autouse=True)
def no_programs_on_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The evaluator gathers code context with ``git`` in its workdir (a fresh
    temporary folder with no repository, so there is never any). With nothing
    on PATH those calls fail at once instead of costing four process starts
    per example (measured in one run on this machine: 49 ms -> 21 ms per evaluation).
    What the LLM is sent is the same: no code context either way. Package scope:
    the empty PATH ends with tests/gitreins (tests after it run git)."""
    empty = tmp_path_factory.mktemp("empty-path")
    saved = os.environ.get("PATH")
    os.environ["PATH"] = str(empty)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("PATH", None)
        else:
            os.environ["PATH"] = saved
