"""Each langchain finding's seed-free program: plain langchain, no ctxaudit, exit 1 when
the finding reproduces (what an upstream report quotes)."""

from pathlib import Path


def program(finding_id: str) -> Path:
    """The program of a finding: ``LC-CUT-FOLDS-TOOL-GROUP`` -> ``lc_cut_folds_tool_group.py``."""
    return Path(__file__).with_name(finding_id.lower().replace("-", "_") + ".py")
