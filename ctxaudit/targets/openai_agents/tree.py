"""openai-agents trees and the environments they run in (:mod:`ctxaudit.targets.pypi`).

A spec names an openai-agents release (PyPI ``openai-agents``, import name ``agents``,
whose ``agents.memory`` holds the sessions and ``OpenAIResponsesCompactionSession``):
``openai-agents`` (the pinned release), ``openai-agents==X`` or ``X`` (that release's
wheel), or a folder that holds ``agents/memory/openai_responses_compaction_session.py``
(an unpacked wheel, a mutated copy, ``src`` of a checkout).
"""

from __future__ import annotations

from pathlib import Path

from ctxaudit.targets.pypi import Env, Library, Tree

NAME = "openai-agents"
PACKAGE = "agents"
PINNED = "0.24.0"  # the current release
COMPACTION = "agents/memory/openai_responses_compaction_session.py"

LIBRARY = Library(
    name=NAME,
    dist=NAME,
    marker=COMPACTION,
    pinned=PINNED,
    locks=Path(__file__).with_name("locks"),
    what="an openai-agents tree (0.7.0 and later, with OpenAIResponsesCompactionSession)",
    env_prefix="CTXAUDIT_OPENAI_AGENTS",
    extra_environ={
        "OPENAI_AGENTS_DISABLE_TRACING": "1",  # never export traces (the rig disables them too)
        "OPENAI_API_KEY": "ctxaudit-fake",  # only the rig's local server is ever called
    },
    # the sdist has no test group: its tests' tools are in ``dev`` beside the docs, lint
    # and type-check tools and the packages of tests the peer suite does not select
    # (other session stores, voice, realtime, sandboxes, browser and computer tools)
    peer_group="dev",
    peer_omit=frozenset(
        {
            "aiohttp",
            "dapr",
            "fakeredis",
            "fastapi",
            "graphviz",
            "grpcio",
            "mkdocs",
            "mkdocs-material",
            "mkdocs-static-i18n",
            "mkdocstrings",
            "mypy",
            "playwright",
            "protobuf",
            "pygments",
            "pymdown-extensions",
            "pymongo",
            "pynput",
            "pyright",
            "rich",
            "ruff",
            "sounddevice",
            "textual",
            "twilio",
            "types-pynput",
        }
    ),
    # what its selected tests import from the SDK's extras, which its own CI installs:
    # httpx (test_agent_runner.py builds httpx requests) and the SQLAlchemy session
    # store (test_sqlalchemy_compaction.py compacts over it)
    peer_add=("httpx", "SQLAlchemy[asyncio]>=2.0"),
    # its tests check tracing, which OPENAI_AGENTS_DISABLE_TRACING would change; their
    # conftest installs a processor that keeps spans in memory, so nothing is exported
    peer_environ={"OPENAI_API_KEY": "ctxaudit-fake"},
)

AgentsTree = Tree
AgentsEnv = Env
resolve = LIBRARY.resolve
is_tree = LIBRARY.is_tree
from_path = LIBRARY.from_path
ensure_env = LIBRARY.ensure_env
child_environ = LIBRARY.child_environ
