"""google-adk trees and the environments they run in (:mod:`ctxaudit.targets.pypi`).

A spec names a google-adk: ``google-adk`` (the pinned release), ``google-adk==X`` or
``X`` (that release's wheel), or a folder that holds ``google/adk/sessions/`` (an
unpacked wheel, a mutated copy, ``src`` of a checkout). The environment installs the
``db`` extra (``DatabaseSessionService``'s SQLAlchemy and its SQLite driver) where the
release has it, and SQLAlchemy's asyncio support (``greenlet``) in any case.
"""

from __future__ import annotations

from pathlib import Path

from ctxaudit.targets.pypi import Library

NAME = "google-adk"
PINNED = "2.13.0"  # the current release

LIBRARY = Library(
    name=NAME,
    dist="google-adk",
    marker="google/adk/sessions/base_session_service.py",
    pinned=PINNED,
    locks=Path(__file__).with_name("locks"),
    what="a google-adk tree",
    env_prefix="CTXAUDIT_GOOGLE_ADK",
    # no telemetry or model service is reached: only the session services run
    extra_environ={"OTEL_SDK_DISABLED": "true", "GOOGLE_GENAI_USE_VERTEXAI": "false"},
    extras=("db",),
    beside=("sqlalchemy[asyncio]",),
)
