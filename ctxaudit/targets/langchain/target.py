"""langchain (v1) as a :class:`~ctxaudit.targets.base.Target`: ``SummarizationMiddleware``
(C1, S6, S7) and the tool-call limit's end (B3). Trees and environments are
:mod:`ctxaudit.targets.langchain.tree`; its suites (``tests/langchain/inenv``) run in
the release's own environment, with the tree first on the path
(:class:`~ctxaudit.targets.library.LibraryTarget`). The mutation audit's peer suite is
langchain's own tests from the release's sdist, run in the release's peer environment
(``locks/langchain-X-peer.txt``; :mod:`ctxaudit.targets.pypi`).
"""

from __future__ import annotations

from pathlib import Path

from ctxaudit.properties import applying
from ctxaudit.targets.base import MutationScope, PytestOption
from ctxaudit.targets.langchain.findings import FINDINGS_TESTS, NAME
from ctxaudit.targets.langchain.tree import LIBRARY
from ctxaudit.targets.library import LibraryTarget

INENV = "tests/langchain/inenv"


class Langchain(LibraryTarget):
    name = NAME
    library = LIBRARY
    findings_module = "ctxaudit.targets.langchain.findings"
    properties = applying(
        "B3",
        "S6",
        "S7",
        "C1",
        notes={
            "B3": "ToolCallLimitMiddleware's end: its findings program",
            "S7": "the summarizer's failure is the failed write",
        },
    )
    suites = (INENV,)
    findings_registry = "ctxaudit/targets/langchain/findings.py"
    fixes_package = "ctxaudit.targets.langchain.fixes"
    mutation = MutationScope(
        NAME,
        "langchain",
        spec_option="--langchain",
        config=Path(__file__).with_name("mutation.toml"),
        spec_help="langchain release (langchain==1.5.2) or a tree that holds langchain/",
        # its sdist's tests/, in the release's peer environment; [langchain.peer] selects them
        peer=True,
    )
    pytest_options = (
        PytestOption(
            "--langchain",
            "langchain target: a release (1.5.2, langchain==1.5.2) fetched into .cache/, or "
            "a folder that holds langchain/agents/middleware. Default: the current release.",
        ),
    )
    fixed_suites = (INENV, f"--ignore={FINDINGS_TESTS}")
    spec_forms = "'langchain==X', a folder that holds langchain/"
    default_spec = NAME


TARGET = Langchain()
