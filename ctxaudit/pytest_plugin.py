"""ctxaudit's pytest setup for its property suites: Hypothesis profiles
(ctxaudit/profiles.py), the registered targets' options (``--gitreins``,
``--lightspeed-repo`` ...: ctxaudit/targets/pytest_options.py), how failures print
(ctxaudit/failure_output.py: ``--target-log``, ``--failure-format``, ``--replay``) and
"could not check" for ctxaudit's own errors (ctxaudit/pytest_outcomes.py).

This repository's ``tests/conftest.py`` loads it; the audit and the mutation runner
pass it (``-p ctxaudit.pytest_plugin``) to every suite they run, so a target's suite
that lives outside this repository gets the same setup.
"""

from __future__ import annotations

import argparse

import pytest

from ctxaudit import failure_output, profiles, seeding
from ctxaudit.targets import pytest_options

#: a failure that is ctxaudit's own error is an ERROR ("could not check"), not a finding
pytest_plugins = ["ctxaudit.pytest_outcomes"]

_PROFILE = profiles.load_from_env()


def pytest_addoption(parser: pytest.Parser) -> None:
    failure_output.addoption(parser)
    pytest_options.addoption(parser)


def pytest_configure(config: pytest.Config) -> None:
    failure_output.register(config, pytest_options.names())
    pytest_options.configure(config)
    _seed(config)


def _seed(config: pytest.Config) -> None:
    """``--hypothesis-seed`` under a derandomized profile: Hypothesis ignores it there,
    so a seed other than 0 is routed through :mod:`ctxaudit.seeding` (each test's own
    random source from the seed and its digest: a search of its own, the same on every
    run with that seed); 0 is the profile's own examples."""
    from hypothesis import settings

    given = config.getoption("--hypothesis-seed", default=None)
    if given is None or not settings().derandomize:
        return  # a random profile takes the seed as Hypothesis does
    try:
        seed = profiles.parse_seed(str(given))
    except argparse.ArgumentTypeError as e:
        raise pytest.UsageError(
            f"--hypothesis-seed={given}: under the derandomized profile {_PROFILE!r} a "
            f"seed is a non-negative decimal integer ({e})"
        ) from None
    if seed:
        seeding.SEED[0] = seed
        seeding.install_seed_hook()


def pytest_report_header(config: pytest.Config) -> str:
    return f"ctxaudit: Hypothesis profile {_PROFILE!r}; {pytest_options.header(config)}"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    from ctxaudit import shapes, stats

    stats.dump()
    shapes.dump()
