"""LCORE-3883 across the repository's history: is a compacted /v1/query turn stored?

Run by ``tests/lightspeed/test_lightspeed.py`` on chosen trees, with
``CTXAUDIT_LIGHTSPEED_HISTORY`` saying what the tree must show: ``holds``
(commit 41d55b98 still stores the turn) or ``fails`` (every release tag with
compaction does not). Without it these tests skip.

- the fixed program: two short turns, then a /v1/query one token over the
  limit; S6 after it holds, or fails with the turn missing;
- ``fails`` only: the lockstep restricted to /v1/query finds the break by
  itself: its failure names S6 after a compacted /v1/query whose own turn OGX
  does not hold. The verdict reads only that failing step, which every failing
  example of the search shares; the search's first failing program, unshrunk, is
  printed for a reader.
"""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import Phase, settings
from hypothesis.stateful import rule, run_state_machine_as_test

from ctxaudit.targets.lightspeed.findings import BY_ID, names_property
from tests.lightspeed.inenv import programs
from tests.lightspeed.inenv.test_lockstep import LightspeedMachine, Send, sends

EXPECT = os.environ.get("CTXAUDIT_LIGHTSPEED_HISTORY", "")
pytestmark = [
    pytest.mark.properties("S6"),
    pytest.mark.skipif(EXPECT not in ("holds", "fails"), reason="not a history run"),
]

#: the heading of an S6 paragraph after a compacted /v1/query, and its request's tag
#: (``S6: after query q5 (compacted) ...``; ``S1/S6: ...`` when it shows S1 too)
COMPACTED_QUERY = re.compile(r"^(\w+/)*S6: after query (?P<tag>q\d+) \(compacted[,)]")


def s6_problem(message: str | None) -> str | None:
    """The S6 part of a failure message, if S6 failed."""
    if not message:
        return None
    parts = [p for p in message.split("\n\n") if names_property(p.split("\n", 1)[0], "S6")]
    return parts[0] if parts else None


def turn_missing(problem: str) -> str | None:
    """Why an S6 paragraph does not show a compacted /v1/query whose own turn is missing
    (None: it does): its request is a compacted /v1/query, and OGX holds neither its
    input nor its answer while the model holds both."""
    heading = COMPACTED_QUERY.match(problem)
    if heading is None:
        return "S6 fails, but not after a compacted /v1/query"
    tag = heading["tag"]
    rows = [line.partition(" | ") for line in problem.splitlines()[2:]]
    mine = re.compile(rf"'{tag}[ a]")  # its input 'q5 ask ...' and its answer 'q5a ...'
    held = [left for left, _, _ in rows if mine.search(left)]
    wanted = [right for _, _, right in rows if mine.search(right)]
    if held or len(wanted) < 2:
        return f"S6 fails after {tag}, but its turn is not what is missing"
    return None


def test_compacted_query_program() -> None:
    problem = s6_problem(programs.run("LS-QUERY-COMPACTED-FAILS"))
    if EXPECT == "holds":
        assert problem is None, f"S6 should hold on this tree:\n{problem}"
    else:
        assert problem is not None, "S6 should fail on this tree: the compacted turn was stored"
        why = turn_missing(problem)
        assert why is None, f"{why}:\n{problem}"


class QueryOnly(LightspeedMachine):
    """The lockstep with /v1/query as its only path.

    Every conversation starts with a /v1/query too: one an A2A message started is
    refused by the /v1 endpoints (the full lockstep sends over A2A there instead).
    """

    def request(self, conv: str, path: str, send: Send) -> None:  # no longer a rule
        self._request(conv, path, send)

    @rule(target=LightspeedMachine.conversations)
    def new_conversation(self, first: str = "query") -> str:
        return super().new_conversation("query")

    @rule(conv=LightspeedMachine.conversations, send=sends)
    def query(self, conv: str, send: Send) -> None:
        self._request(conv, "query", send)


#: left out of the search: a conversation past the server's first page of items, where
#: the 0.6 line estimates on the first page only (LS-ITEMS-FIRST-PAGE, C1). A failure
#: there is that finding, not this one; outside it, every failure of the search is the
#: first compacted /v1/query, whatever example shrinking reached.
LEFT_OUT = (BY_ID["LS-ITEMS-FIRST-PAGE"],)


@pytest.mark.skipif(EXPECT != "fails", reason="the tree is expected to hold S6")
def test_lockstep_finds_the_missing_turn() -> None:
    QueryOnly.excluded = LEFT_OUT
    # the explain phase traces every line of the app and OGX: minutes, for a note.
    # No shrinking: the verdict reads only the failing step, which the first failing
    # example has as every shrunk one does, and a shrink bounded by wall time would
    # print a program that depends on the machine's speed (it cost 10 s a run).
    # One bug: Hypothesis would otherwise search on for others for up to ten seconds
    # of wall time, so which failures it reports would depend on the machine's speed.
    phases = [p for p in settings.default.phases if p not in (Phase.explain, Phase.shrink)]
    with pytest.raises(AssertionError) as failure:
        run_state_machine_as_test(
            QueryOnly, settings=settings(phases=phases, report_multiple_bugs=False)
        )
    message = str(failure.value)
    program = "\n".join(getattr(failure.value, "__notes__", []))
    problem = s6_problem(message)
    assert problem is not None, f"the lockstep failed, but not on S6:\n{message}\n{program}"
    why = turn_missing(problem)
    assert why is None, f"{why}:\n{problem}\n{program}"
    print(f"{problem}\n{program}")
