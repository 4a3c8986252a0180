"""langchain trees and the environments they run in (:mod:`ctxaudit.targets.pypi`).

A spec names a langchain (the ``langchain`` package, v1, whose
``langchain.agents.middleware`` holds ``SummarizationMiddleware`` and the call limits):
``langchain`` (the pinned release), ``langchain==X`` or ``X`` (that release's wheel), or a
folder that holds ``langchain/agents/middleware/summarization.py`` (an unpacked wheel, a
mutated copy, ``libs/langchain_v1`` of a checkout).
"""

from __future__ import annotations

from pathlib import Path

from ctxaudit.targets.pypi import Env, Library, Tree

NAME = "langchain"
PINNED = "1.5.2"  # the current release
SUMMARIZATION = "langchain/agents/middleware/summarization.py"

LIBRARY = Library(
    name=NAME,
    dist=NAME,
    marker=SUMMARIZATION,
    pinned=PINNED,
    locks=Path(__file__).with_name("locks"),
    what="a langchain v1 tree with SummarizationMiddleware (1.0.0 and later)",
    env_prefix="CTXAUDIT_LANGCHAIN",
    extra_environ={"LANGSMITH_TRACING": "false"},  # never report runs to a tracing service
)

LangchainTree = Tree
LangchainEnv = Env
resolve = LIBRARY.resolve
is_tree = LIBRARY.is_tree
from_path = LIBRARY.from_path
ensure_env = LIBRARY.ensure_env
child_environ = LIBRARY.child_environ
