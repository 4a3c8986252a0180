"""Each openai-agents finding's seed-free program: plain openai-agents, no ctxaudit, exit 1
when the finding reproduces (what an upstream report quotes). The programs share one
small stdlib fake of the Responses API, ``fake_responses.py``, beside them."""

from pathlib import Path

#: what the programs import: loaded once, before each program forks, where a test runs
#: several (tests/finding_programs.py); a module a release lacks is not preloaded
PRELOAD = ("agents", "agents.memory", "agents.models.interface", "openai.types.responses")


def program(finding_id: str) -> Path:
    """The program of a finding: ``OA-WINDOW-HIDES-HISTORY`` -> ``oa_window_hides_history.py``."""
    return Path(__file__).with_name(finding_id.lower().replace("-", "_") + ".py")
