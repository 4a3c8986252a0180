"""strands-agents trees and the environments they run in (:mod:`ctxaudit.targets.pypi`).

A spec names a strands-agents: ``strands-agents`` (the pinned release),
``strands-agents==X`` or ``X`` (that release's wheel), or a folder that holds
``strands/session/`` (an unpacked wheel, a mutated copy, ``src`` of a checkout).
"""

from __future__ import annotations

from pathlib import Path

from ctxaudit.targets.pypi import Library

NAME = "strands-agents"
PINNED = "1.62.0"  # the current release

LIBRARY = Library(
    name=NAME,
    dist="strands-agents",
    marker="strands/session/repository_session_manager.py",
    pinned=PINNED,
    locks=Path(__file__).with_name("locks"),
    what="a strands-agents tree",
    env_prefix="CTXAUDIT_STRANDS_AGENTS",
    # the default model (Bedrock) is never built or called: the agent gets a faked one;
    # no telemetry leaves the run
    extra_environ={"AWS_REGION": "us-east-1", "OTEL_SDK_DISABLED": "true"},
    # the peer suite (its own tests, from the sdist): the test tools of its dev extra (the
    # AWS mock among them: its tests/conftest.py imports it); the release tools, linters
    # and type checker are left out
    peer_group="dev",
    peer_table="optional-dependencies",
    peer_omit=frozenset(
        {"commitizen", "hatch", "mypy", "pre-commit", "ruff", "pytest-cov", "pytest-xdist"}
    ),
)
