"""strands-agents as a :class:`~ctxaudit.targets.base.Target`: an ``Agent`` whose
conversation a ``SummarizingConversationManager`` folds or a
``SlidingWindowConversationManager`` trims, persisted by a ``FileSessionManager`` (and a
``SnapshotSessionManager`` from 1.55 on) and restored by a new agent (S2, S6, C1), on
``strands-agents`` releases. Trees and environments are
:mod:`ctxaudit.targets.strands_agents.tree`; its suites (``tests/strands_agents/inenv``) run
in the release's own environment, with the tree first on the path
(:class:`~ctxaudit.targets.library.LibraryTarget`).
"""

from __future__ import annotations

from pathlib import Path

from ctxaudit.properties import applying
from ctxaudit.targets.base import MutationScope, PytestOption
from ctxaudit.targets.library import LibraryTarget
from ctxaudit.targets.strands_agents.findings import FINDINGS_TESTS, NAME
from ctxaudit.targets.strands_agents.tree import LIBRARY

INENV = "tests/strands_agents/inenv"


class StrandsAgents(LibraryTarget):
    name = NAME
    library = LIBRARY
    findings_module = "ctxaudit.targets.strands_agents.findings"
    properties = applying(
        "S2",
        "S6",
        "C1",
        notes={
            "S2": "an agent restored from its session holds the conversation the agent had",
            "S6": "pinned messages kept; every message held or in a held summary, once",
            "C1": "a tool result stays right after the model message that asked for it",
        },
    )
    suites = (INENV,)
    findings_registry = "ctxaudit/targets/strands_agents/findings.py"
    fixes_package = "ctxaudit.targets.strands_agents.fixes"
    mutation = MutationScope(
        NAME,
        "strands",
        spec_option="--strands-agents",
        config=Path(__file__).with_name("mutation.toml"),
        spec_help="strands-agents release (strands-agents==1.62.0) or a tree that holds strands/",
        # its sdist's tests/, in the release's peer environment; [strands-agents.peer]
        # selects them
        peer=True,
    )
    pytest_options = (
        PytestOption(
            "--strands-agents",
            "strands-agents target: a release (1.62.0, strands-agents==1.62.0) fetched into "
            ".cache/, or a folder that holds strands/session. Default: the current release.",
        ),
    )
    fixed_suites = (INENV, f"--ignore={FINDINGS_TESTS}")
    spec_forms = "'strands-agents==X', a folder that holds strands/"
    # audited when named (--target strands-agents), not by a bare audit while it is new
    default_spec = ""


TARGET = StrandsAgents()
