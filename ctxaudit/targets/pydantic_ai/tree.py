"""pydantic-ai trees and the environments they run in (:mod:`ctxaudit.targets.pypi`).

A spec names a pydantic-ai: ``pydantic-ai`` (the pinned release), ``pydantic-ai==X`` or
``X`` (that release of ``pydantic-ai-slim``, the distribution that ships
``pydantic_ai.usage``), or a folder that holds ``pydantic_ai/usage.py`` (an unpacked
wheel, a mutated copy, ``pydantic_ai_slim`` of a checkout).
"""

from __future__ import annotations

from pathlib import Path

from ctxaudit.targets.pypi import Library

NAME = "pydantic-ai"
PINNED = "2.68.0"  # the current release

LIBRARY = Library(
    name=NAME,
    dist="pydantic-ai-slim",
    marker="pydantic_ai/usage.py",
    pinned=PINNED,
    locks=Path(__file__).with_name("locks"),
    what="a pydantic-ai tree",
    env_prefix="CTXAUDIT_PYDANTIC_AI",
    extra_environ={"LOGFIRE_SEND_TO_LOGFIRE": "false"},  # no telemetry leaves the run
)
