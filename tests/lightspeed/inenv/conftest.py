"""Tests that run inside a lightspeed-stack tree's own Python 3.12 environment.

``tests/lightspeed/test_lightspeed.py`` builds the environment and runs this
folder there, with ``CTXAUDIT_LIGHTSPEED_TREE`` naming the tree and its
``src`` on ``sys.path``. Run anywhere else (ctxaudit's own interpreter), the
folder collects nothing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

TREE = os.environ.get("CTXAUDIT_LIGHTSPEED_TREE", "")
if not TREE:
    collect_ignore_glob = ["*.py"]


@pytest.fixture(scope="session")
def tree() -> Path:
    return Path(TREE)


def pytest_report_header(config: pytest.Config) -> str:
    label = os.environ.get("CTXAUDIT_LIGHTSPEED_LABEL", TREE)
    return f"ctxaudit: lightspeed-stack target {label}"


@pytest.fixture(scope="session")
def reproduction() -> dict[str, str | None]:
    """Each known finding's program on this tree: its failure message, or None."""
    from tests.lightspeed.inenv import programs

    return {finding_id: programs.run(finding_id) for finding_id in programs.PROGRAMS}


@pytest.fixture(scope="session")
def reproducing(request: pytest.FixtureRequest) -> tuple[object, ...]:
    """The known findings that reproduce here (the lockstep leaves their regions out).

    ``CTXAUDIT_LIGHTSPEED_LEAVE_OUT`` (finding ids, comma-separated; ``none``)
    fixes the set instead: a broken copy of a tree is checked with the regions
    that reproduce on the tree it was copied from, so a break that brings back
    a known finding's behaviour is caught rather than left out.
    """
    from ctxaudit.targets.lightspeed.findings import BY_ID
    from tests.lightspeed.inenv import programs

    fixed = os.environ.get("CTXAUDIT_LIGHTSPEED_LEAVE_OUT")
    if fixed is not None:
        return tuple(BY_ID[i] for i in fixed.split(",") if i and i != "none")
    reproduction = request.getfixturevalue("reproduction")
    found = programs.reproducing(reproduction)
    record = os.environ.get("CTXAUDIT_LIGHTSPEED_REPRODUCTION")
    if record:  # the audit reads which known findings affect this tree
        data = {"reproducing": [f.id for f in found], "messages": reproduction}
        Path(record).write_text(json.dumps(data, indent=1))
    return found


@pytest.fixture(scope="session", autouse=True)
def _stop_service() -> Iterator[None]:
    yield
    from tests.lightspeed.inenv import service

    service.stop()
