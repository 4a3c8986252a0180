"""openai-agents as a :class:`~ctxaudit.targets.base.Target`: its sessions
(``agents.memory``), the runner's writes to them and ``OpenAIResponsesCompactionSession``
(S1-S3, S6, S7, S9, C1), and its agent loop's turn limit and usage (B1, B3: the budget
concern's run lockstep, ``ctxaudit/targets/openai_agents/budget.py``). Trees and environments are
:mod:`ctxaudit.targets.openai_agents.tree`; its suites (``tests/openai_agents/inenv``) run
in the release's own environment, with the tree first on the path
(:class:`~ctxaudit.targets.library.LibraryTarget`). The mutation audit's peer suite is
the SDK's own tests from the release's sdist, run in the release's peer environment
(``locks/openai-agents-X-peer.txt``; :mod:`ctxaudit.targets.pypi`).
"""

from __future__ import annotations

from pathlib import Path

from ctxaudit.properties import applying
from ctxaudit.targets.base import MutationScope, PytestOption
from ctxaudit.targets.library import LibraryTarget
from ctxaudit.targets.openai_agents import tree as oa
from ctxaudit.targets.openai_agents.findings import FINDINGS_TESTS, NAME

INENV = "tests/openai_agents/inenv"
OPTION = "--openai-agents"


class OpenAIAgents(LibraryTarget):
    name = NAME
    library = oa.LIBRARY
    findings_module = "ctxaudit.targets.openai_agents.findings"
    properties = applying(
        "B1",
        "B3",
        "S1",
        "S2",
        "S3",
        "S6",
        "S7",
        "S9",
        "C1",
        notes={
            "B1": "the run's Usage: requests, input (cached inside) and output tokens",
            "B3": "max_turns, checked before each turn (docs/properties.md, section 1b)",
            "S1": "the runner writes every turn; the compaction session only replaces",
            "S7": "a failed compact call or replacement write",
            "S9": "a run whose automatic compaction fails",
        },
    )
    suites = (INENV,)
    findings_registry = "ctxaudit/targets/openai_agents/findings.py"
    fixes_package = "ctxaudit.targets.openai_agents.fixes"
    mutation = MutationScope(
        NAME,
        oa.PACKAGE,
        spec_option=OPTION,
        config=Path(__file__).with_name("mutation.toml"),
        spec_help="openai-agents release (openai-agents==0.24.0) or a tree that holds agents/",
        # its sdist's tests/, in the release's peer environment; [openai-agents.peer]
        # selects them
        peer=True,
    )
    pytest_options = (
        PytestOption(
            OPTION,
            "openai-agents target: a release (0.24.0, openai-agents==0.24.0) fetched into "
            ".cache/, or a folder that holds agents/memory. Default: the current release.",
        ),
    )
    fixed_suites = (INENV, f"--ignore={FINDINGS_TESTS}")
    spec_forms = "'openai-agents==X', a folder that holds agents/"
    default_spec = NAME


TARGET = OpenAIAgents()
