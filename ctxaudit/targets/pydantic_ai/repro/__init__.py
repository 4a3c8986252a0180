"""Each pydantic-ai finding's seed-free program: plain pydantic-ai, no ctxaudit, exit 1 when
the finding reproduces (what an upstream report quotes)."""

from pathlib import Path


def program(finding_id: str) -> Path:
    """The program of a finding: ``PAI-PRECHECK-SKIPS-OUTPUT`` -> ``pai_precheck_skips_output.py``."""
    return Path(__file__).with_name(finding_id.lower().replace("-", "_") + ".py")
