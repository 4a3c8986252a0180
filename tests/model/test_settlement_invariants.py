"""The model's settlement (``model/settlement.py``) held to the settlement's invariants
(T1-T4, ``ctxaudit/invariants/settlement.py``), with no target involved: the model is the
oracle of the ledger's and lightspeed-stack's locksteps, so where it breaks one, a
target that agrees with it passes for the wrong reason.

Requests of every path, stored or not, continued or not, sized to compact or not, each
ending every way its path can end (completed, blocked by a shield, interrupted,
cancelled), its write failing or not, are planned and settled on a few conversations,
each ending after a drawn number of later requests were sent (in flight meanwhile, so a
later request may end first: its turn then stands first, docs/properties.md "Order of
turns").
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxaudit.invariants.settlement import check_conversation
from model import settlement as model

pytestmark = pytest.mark.properties("S6")

ENDINGS = {
    "completed": lambda tag: model.Completed((f"{tag}a",)),
    "blocked": lambda tag: model.Blocked("refused"),
    "interrupted": lambda tag: model.Interrupted((f"{tag}a",)),
    "cancelled": lambda tag: model.Cancelled(()),
}


def summarize(items: Sequence[Any]) -> str:
    return f"summary of {len(items)}"


def tag_of(items: Sequence[Any]) -> str | None:
    head = str(items[-1].get("content", "")).split(" ")[0] if items else ""
    return head if head.startswith("q") else None


# weighted to the common case (stored, completed, written), so that conversations of
# several stored turns, the ones T1-T3 speak of, are drawn often
requests = st.tuples(
    st.sampled_from(["c1", "c2"]),
    st.sampled_from(["query", "streaming_query", "responses", "responses_stream"]),
    st.sampled_from([True, True, True, False]),  # store
    st.sampled_from(["completed", "completed", *ENDINGS]),
    st.sampled_from([False, False, False, True]),  # the write fails
    st.integers(0, 60),  # padding, in tokens
    st.sampled_from(["text", "items"]),
    st.sampled_from([0, 0, 1, 2]),  # how many later requests are sent before it ends
)


@given(
    st.lists(requests, min_size=1, max_size=12),
    st.sampled_from([(200, 0.5, 20, 1), (120, 0.9, 0, 2), (400, 0.3, 40, 0)]),
)
def test_the_models_settlement_keeps_every_invariant(
    sends: list[tuple[str, str, bool, str, bool, int, str, int]],
    setup: tuple[int, float, int, int],
) -> None:
    params = model.Params(*setup, "be brief", summarize)
    convs: dict[str, tuple[model.Turn, ...]] = {"c1": (), "c2": ()}
    sent: dict[str, dict[str, tuple[Any, ...]]] = {"c1": {}, "c2": {}}
    must: set[str] = set()
    ended: dict[str, list[str]] = {"c1": [], "c2": []}
    #: requests sent and not yet ended: (the index of the send it ends after, its own
    #: index, its plan, tag, ending, whether its write fails)
    in_flight: list[tuple[int, int, model.Plan, str, model.Ending, bool]] = []

    def end_due(now: int) -> None:
        """End every request due by the send ``now``: the one sent last first (a request
        that ends right after its own send overtakes one that waited for that send)."""
        nonlocal convs
        for due in sorted(in_flight, key=lambda f: (f[0], -f[1])):
            if due[0] <= now:
                in_flight.remove(due)
                _, _, plan, tag, ending, fails = due
                convs, _ = model.settle(convs, plan, ending, write_fails=fails)
                ended[plan.request.conversation].append(tag)

    numbers = itertools.count(1)
    for index, (conv, path, store, how, fails, pad, form, lag) in enumerate(sends):
        streamed = path in model.STREAMING_PATHS
        if how == "blocked" and path not in model.SHIELDED_PATHS:
            how = "completed"  # no shield on that path
        if how in ("interrupted", "cancelled") and not streamed:
            how = "completed"  # only a stream is interrupted
        ending = ENDINGS[how](tag := f"q{next(numbers)}")
        text = tag + (" " + "x" * 4 * pad if pad else "")
        value: Any = text if form == "text" else ({"role": "user", "content": "ctx"},
                                                  {"role": "user", "content": text})  # fmt: skip
        request = model.Request(conv, value, path, store)  # type: ignore[arg-type]
        plan = model.plan(convs, request, params)
        fails = fails and model.writer(plan, ending) is not None
        in_flight.append((index + lag, index, plan, tag, ending, fails))
        end_due(index)
        sent[conv][tag] = model.input_items(value)
        if store and not fails and how == "completed":
            must.add(tag)
    end_due(len(sends) + 2)
    for conv, turns in convs.items():
        flat = model.flatten(turns)
        broken = check_conversation(flat, sent[conv], tag_of, must, ended=ended[conv])
        assert not broken, (conv, broken)
