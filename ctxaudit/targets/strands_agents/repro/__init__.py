"""Each strands-agents finding's seed-free program: plain strands-agents, no ctxaudit, exit 1
when the finding reproduces (what an upstream report quotes)."""

from pathlib import Path

#: what the programs import: loaded once, before each program forks, where a test runs
#: several (tests/finding_programs.py); a module a release lacks is not preloaded
PRELOAD = (
    "strands",
    "strands.agent.conversation_manager",
    "strands.session.file_session_manager",
)


def program(finding_id: str) -> Path:
    """The program of a finding: ``SA-SUMMARY-PIN-RESTORE`` -> ``sa_summary_pin_restore.py``."""
    return Path(__file__).with_name(finding_id.lower().replace("-", "_") + ".py")
