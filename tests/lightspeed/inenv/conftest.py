"""Tests that run inside a lightspeed-stack tree's own Python 3.12 environment.

``tests/lightspeed/test_lightspeed.py`` builds the environment and runs this folder
there, with ``CTXAUDIT_LIGHTSPEED_TREE`` naming the tree and its ``src`` on
``sys.path``. Asked for from ctxaudit's own interpreter (a report's command), it runs
there (``tests/inenv_route.py``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from tests.inenv_route import route

TREE = os.environ.get("CTXAUDIT_LIGHTSPEED_TREE", "")
if not TREE:
    collect_ignore_glob = ["*.py"]


def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """Asked for from ctxaudit's own interpreter (a report's command): run there."""
    return route(config, "lightspeed-stack", Path(__file__).parent, "CTXAUDIT_LIGHTSPEED_TREE")


@pytest.fixture(scope="session")
def tree() -> Path:
    return Path(TREE)


def pytest_report_header(config: pytest.Config) -> str:
    label = os.environ.get("CTXAUDIT_LIGHTSPEED_LABEL", TREE)
    return f"ctxaudit: lightspeed-stack target {label}"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The lockstep first: with ``-x`` a failure of it is reported before the known
    findings' programs run (when the regions left out are fixed, it needs none)."""
    items.sort(key=lambda item: "test_lockstep.py" not in item.nodeid)


@pytest.fixture(scope="session")
def reproduction() -> Mapping[str, str | None]:
    """Each known finding's program on this tree: its failure message, or None. A
    program runs when its finding is first looked up (``programs.Reproduction``): a run
    of one finding's regression test runs that program alone."""
    from tests.lightspeed.inenv import programs

    return programs.Reproduction()


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
        data = {"reproducing": [f.id for f in found], "messages": dict(reproduction)}
        Path(record).write_text(json.dumps(data, indent=1))
    return found


#: seconds the lockstep may spend shrinking a failure, where the profile bounds
#: shrinking (ctxaudit/profiles.py SHRINK_SECONDS; not in the audit). A failing run
#: also pays for the parent's start (~3 s), this interpreter's (~2 s) and the
#: service's (~6 s) before its first example, all within the 30 s a developer waits
#: (reports/benchmarks/failure.md); a shrink example costs about 0.3 s.
SHRINK_SECONDS = 10


@pytest.fixture(scope="session", autouse=True)
def _bound_shrinking() -> None:
    from hypothesis.internal.conjecture import engine

    from ctxaudit import profiles

    profile = os.environ.get("CTXAUDIT_PROFILE", profiles.DEFAULT)
    if profile in profiles.SHRINK_SECONDS and not os.environ.get("CTXAUDIT_RESULTS"):
        engine.MAX_SHRINKING_SECONDS = min(profiles.SHRINK_SECONDS[profile], SHRINK_SECONDS)


@pytest.fixture(scope="session", autouse=True)
def _stop_service() -> Iterator[None]:
    yield
    from tests.lightspeed.inenv import service

    service.stop()


_exit_status: list[int] = []


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _exit_status.append(int(exitstatus))


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """A child run by ctxaudit's runner (``CTXAUDIT_LIGHTSPEED_EXIT_AT_ONCE``) ends here.

    Everything it reports is written by now. What is left is the interpreter's own
    teardown: the app's, OGX's and Hypothesis's objects, and a SQLite worker thread
    OGX leaves behind, 2-4 s of a failing run a developer waits for (measured; the
    in-process mutation worker never sets the variable)."""
    if os.environ.get("CTXAUDIT_LIGHTSPEED_EXIT_AT_ONCE") and _exit_status:
        import sys

        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_exit_status[-1])
