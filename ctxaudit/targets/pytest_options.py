"""The registered targets' pytest options (``--gitreins=SPEC``, ``--lightspeed-repo``
...), for ctxaudit's pytest setup: each target declares its own
(:attr:`~ctxaudit.targets.base.Target.pytest_options`); nothing here names one."""

from __future__ import annotations

import pytest

from ctxaudit import targets
from ctxaudit.targets import concern_suites
from ctxaudit.targets.base import PytestOption, Target


def declared() -> list[tuple[Target, PytestOption]]:
    """Every registered target's pytest options, in registration order, once each."""
    seen: set[str] = set()
    found: list[tuple[Target, PytestOption]] = []
    for target in targets.all_targets():
        for option in target.pytest_options:
            if option.name not in seen:
                seen.add(option.name)
                found.append((target, option))
    return found


def names() -> list[str]:
    """The options' names, the shared suites' target and version among them: a replay
    command repeats those given."""
    shared = [concern_suites.TARGET_OPTION, concern_suites.SPEC_OPTION]
    return [option.name for _, option in declared()] + shared


def addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ctxaudit targets", "the target versions ctxaudit's suites check")
    for _, option in declared():
        group.addoption(option.name, default="", metavar=option.metavar, help=option.help)
    concern_suites.addoption(parser)  # the shared suites' target and version


def configure(config: pytest.Config) -> None:
    """An explicit spec of an option that resolves is checked before anything runs: a
    bad one is a usage error of one line."""
    for target, option in declared():
        value = config.getoption(option.name)
        if value and option.resolves:
            try:
                target.resolve(value)
            except targets.TargetError as exc:
                raise pytest.UsageError(str(exc)) from None


def header(config: pytest.Config) -> str:
    """The options given, for the report header ("default" when none is)."""
    given = [
        f"{o.name}={config.getoption(o.name)}" for _, o in declared() if config.getoption(o.name)
    ]
    return "targets " + (" ".join(given) if given else "default")
