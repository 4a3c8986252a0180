"""Each langchain finding's seed-free program: plain langchain, no ctxaudit, exit 1 when
the finding reproduces (what an upstream report quotes)."""

from pathlib import Path

#: what the programs import: loaded once, before each program forks, where a test runs
#: several (tests/finding_programs.py); a module a release lacks is not preloaded
PRELOAD = (
    "langchain.agents",
    "langchain.agents.middleware",
    "langchain.agents.structured_output",
    "langchain_core.language_models.fake_chat_models",
    "langchain_core.messages",
    "langchain_core.tools",
)


def program(finding_id: str) -> Path:
    """The program of a finding: ``LC-CUT-FOLDS-TOOL-GROUP`` -> ``lc_cut_folds_tool_group.py``."""
    return Path(__file__).with_name(finding_id.lower().replace("-", "_") + ".py")
