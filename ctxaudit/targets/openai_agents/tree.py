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
)

AgentsTree = Tree
AgentsEnv = Env
resolve = LIBRARY.resolve
is_tree = LIBRARY.is_tree
from_path = LIBRARY.from_path
ensure_env = LIBRARY.ensure_env
child_environ = LIBRARY.child_environ
