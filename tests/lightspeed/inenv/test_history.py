"""LCORE-3883 across the repository's history: is a compacted /v1/query turn stored?

Run by ``tests/lightspeed/test_lightspeed.py`` on chosen trees, with
``CTXAUDIT_LIGHTSPEED_HISTORY`` saying what the tree must show: ``holds``
(commit 41d55b98 still stores the turn) or ``fails`` (every release tag with
compaction does not). Without it these tests skip.

- the fixed program: two short turns, then a /v1/query one token over the
  limit; S6 after it holds, or fails with the turn missing;
- ``fails`` only: the lockstep restricted to /v1/query finds the break by
  itself and shrinks it to a program that names the path and shows the
  missing turn (what a developer would read).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import Phase, settings
from hypothesis.stateful import rule, run_state_machine_as_test

from tests.lightspeed.inenv import programs
from tests.lightspeed.inenv.test_lockstep import LightspeedMachine, Send, sends

EXPECT = os.environ.get("CTXAUDIT_LIGHTSPEED_HISTORY", "")
pytestmark = [
    pytest.mark.properties("S6"),
    pytest.mark.skipif(EXPECT not in ("holds", "fails"), reason="not a history run"),
]


def s6_problem(message: str | None) -> str | None:
    """The S6 part of a failure message, if S6 failed."""
    if not message:
        return None
    parts = [p for p in message.split("\n\n") if p.startswith("S6:")]
    return parts[0] if parts else None


def test_compacted_query_program() -> None:
    problem = s6_problem(programs.run("LS-QUERY-COMPACTED-FAILS"))
    if EXPECT == "holds":
        assert problem is None, f"S6 should hold on this tree:\n{problem}"
    else:
        assert problem is not None, "S6 should fail on this tree: the compacted turn was stored"
        assert "query" in problem and "<missing>" in problem, problem


class QueryOnly(LightspeedMachine):
    """The lockstep with /v1/query as its only path."""

    def request(self, conv: str, path: str, send: Send) -> None:  # no longer a rule
        self._request(conv, path, send)

    @rule(conv=LightspeedMachine.conversations, send=sends)
    def query(self, conv: str, send: Send) -> None:
        self._request(conv, "query", send)


@pytest.mark.skipif(EXPECT != "fails", reason="the tree is expected to hold S6")
def test_lockstep_shrinks_to_the_missing_turn() -> None:
    QueryOnly.excluded = ()
    # the explain phase traces every line of the app and OGX: minutes, for a note
    phases = [p for p in settings.default.phases if p != Phase.explain]
    with pytest.raises(AssertionError) as failure:
        run_state_machine_as_test(QueryOnly, settings=settings(phases=phases))
    message = str(failure.value)
    program = "\n".join(getattr(failure.value, "__notes__", []))
    problem = s6_problem(message)
    assert problem is not None, message
    assert "after query" in problem and "<missing>" in problem, problem
    assert "state.query(" in program, program
    print(f"{problem}\n{program}")
