"""Each pydantic-ai finding's seed-free program: plain pydantic-ai, no ctxaudit, exit 1 when
the finding reproduces (what an upstream report quotes)."""

from pathlib import Path

#: what the programs import: loaded once, before each program forks, where a test runs
#: several (tests/finding_programs.py); a module a release lacks is not preloaded
PRELOAD = (
    "pydantic_ai",
    "pydantic_ai.models.function",
    "pydantic_ai.usage",
    "pydantic_ai.exceptions",
)


def program(finding_id: str) -> Path:
    """The program of a finding: ``PAI-PRECHECK-SKIPS-OUTPUT`` -> ``pai_precheck_skips_output.py``."""
    return Path(__file__).with_name(finding_id.lower().replace("-", "_") + ".py")
