"""The model's settlement (``model/settlement.py``) held to the settlement's invariants
(T1-T4, ``ctxaudit/invariants/settlement.py``), with no target involved: the model is the
oracle of the ledger's and lightspeed-stack's locksteps, so where it breaks one, a
target that agrees with it passes for the wrong reason.

Requests of every path, stored or not, continued or not, sized to compact or not, each
ending every way its path can end (completed, blocked by a shield, interrupted,
cancelled), its write failing or not, are planned and settled one after another on a
few conversations.
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


requests = st.tuples(
    st.sampled_from(["c1", "c2"]),
    st.sampled_from(["query", "streaming_query", "responses", "responses_stream"]),
    st.booleans(),  # store
    st.sampled_from(list(ENDINGS)),
    st.booleans(),  # the write fails
    st.integers(0, 60),  # padding, in tokens
    st.sampled_from(["text", "items"]),
)


@given(
    st.lists(requests, max_size=12),
    st.sampled_from([(200, 0.5, 20, 1), (120, 0.9, 0, 2), (400, 0.3, 40, 0)]),
)
def test_the_models_settlement_keeps_every_invariant(
    sends: list[tuple[str, str, bool, str, bool, int, str]],
    setup: tuple[int, float, int, int],
) -> None:
    params = model.Params(*setup, "be brief", summarize)
    convs: dict[str, tuple[model.Turn, ...]] = {"c1": (), "c2": ()}
    sent: dict[str, dict[str, tuple[Any, ...]]] = {"c1": {}, "c2": {}}
    must: set[str] = set()
    numbers = itertools.count(1)
    for conv, path, store, how, fails, pad, form in sends:
        ending = ENDINGS[how](tag := f"q{next(numbers)}")
        streamed = path in model.STREAMING_PATHS
        if how == "blocked" and path not in model.SHIELDED_PATHS:
            continue
        if how in ("interrupted", "cancelled") and not streamed:
            continue
        text = tag + (" " + "x" * 4 * pad if pad else "")
        value: Any = text if form == "text" else ({"role": "user", "content": "ctx"},
                                                  {"role": "user", "content": text})  # fmt: skip
        request = model.Request(conv, value, path, store)  # type: ignore[arg-type]
        plan = model.plan(convs, request, params)
        fails = fails and model.writer(plan, ending) is not None
        convs, _ = model.settle(convs, plan, ending, write_fails=fails)
        sent[conv][tag] = model.input_items(value)
        if store and not fails and how == "completed":
            must.add(tag)
    for conv, turns in convs.items():
        broken = check_conversation(model.flatten(turns), sent[conv], tag_of, must)
        assert not broken, (conv, broken)
