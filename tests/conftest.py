"""Shared pytest setup: Hypothesis profiles (ctxaudit/profiles.py), the
``--gitreins`` target option, and how failures print (ctxaudit/failure_output.py:
``--target-log``, ``--failure-format``, ``--replay``)."""

from __future__ import annotations

import pytest

from ctxaudit import failure_output, profiles

#: a failure that is ctxaudit's own error is an ERROR ("could not check"), not a finding
pytest_plugins = ["ctxaudit.pytest_outcomes"]

_PROFILE = profiles.load_from_env()


def pytest_addoption(parser: pytest.Parser) -> None:
    failure_output.addoption(parser)
    parser.addoption(
        "--gitreins",
        default="",
        metavar="SPEC",
        help="gitreins target: a published version (0.14.0, gitreins==0.14.0) fetched into "
        ".cache/, or a path to a source tree that has engine/. Default: the pinned version.",
    )

    parser.addoption(
        "--lightspeed-repo",
        default="",
        metavar="PATH",
        help="lightspeed-stack's git repository (a clone, a bundle or a working tree); "
        "also CTXAUDIT_LIGHTSPEED_REPO. Without it the lightspeed-stack tests skip.",
    )
    parser.addoption(
        "--lightspeed",
        default="",
        metavar="SPEC",
        help="the lightspeed-stack tree to test: lightspeed-stack==TAG, lightspeed-stack@REV "
        "or a path to a working tree. Default: the repository's main.",
    )


def pytest_configure(config: pytest.Config) -> None:
    failure_output.register(config)
    spec = config.getoption("--gitreins")
    if spec:  # an explicit spec is checked before anything runs
        from ctxaudit.targets.gitreins import TargetError, resolve

        try:
            resolve(spec)
        except TargetError as exc:
            raise pytest.UsageError(str(exc)) from None


def pytest_report_header(config: pytest.Config) -> str:
    spec = config.getoption("--gitreins") or "pinned"
    return f"ctxaudit: Hypothesis profile {_PROFILE!r}; gitreins target {spec!r}"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    from ctxaudit import stats

    stats.dump()
