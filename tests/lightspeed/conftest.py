"""The lightspeed-stack repository the tests run against (also loaded, unused, by the
in-environment suite below: imports stay inside the fixture)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def lightspeed_repo(request: pytest.FixtureRequest) -> Path:
    from ctxaudit.targets.lightspeed.tree import repo_from

    repo = repo_from(request.config.getoption("--lightspeed-repo") or None)
    if repo is None:
        pytest.skip(
            "lightspeed-stack tests need its repository: give --lightspeed-repo=PATH "
            "(a clone, a git bundle or a working tree) or set CTXAUDIT_LIGHTSPEED_REPO"
        )
    return repo
