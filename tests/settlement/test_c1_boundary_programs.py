"""C1 at each of its boundaries, through the ledger's request path (``Ledger.query``) in
lockstep with ``model/settlement.py``: fixed programs, no drawn examples, so every
boundary is met on every run whatever the profile or seed.

- the ratio side: the estimate one below, at and one above ``threshold_ratio *
  context_window`` (only above compacts);
- the floor side: the estimate one below, at and one above ``token_floor``;
- ``buffer_turns``: requests that all compact, so the turns no marker covers pass from
  fewer than ``buffer_turns`` (nothing folded), to exactly ``buffer_turns`` (compacted,
  nothing folded), to one more (that turn folded), and on;
- the configuration's own edges: a ratio of exactly 1, a window of 1, a floor and a
  buffer of 0 are valid; one step past each is a configuration error.

``tests/settlement/check_mutants.py`` holds the mutants each of them kills.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from settlement_support import INSTRUCTIONS, summarize

from ledger import CompactionConfig, ConfigError, FaultInjectingStore, Ledger, Request
from ledger.backends import ScriptedBackend
from ledger.server import InferenceServer, counting_ids
from model import settlement as model

pytestmark = pytest.mark.properties("C1")

CHUNKS = ("an", "swer")


class Program:
    """One conversation of the ledger and the model's, request by request."""

    def __init__(self, window: int, ratio: float, floor: int = 0, buffer: int = 2) -> None:
        self.store = FaultInjectingStore()
        self.backend = ScriptedBackend(lambda call: list(CHUNKS))
        server = InferenceServer(self.store, self.backend, response_ids=counting_ids())
        config = CompactionConfig(
            context_window=window, threshold_ratio=ratio, token_floor=floor, buffer_turns=buffer
        )
        self.ledger = Ledger(
            self.store, server, config, summarizer=summarize, instructions=INSTRUCTIONS
        )
        self.params = model.Params(window, ratio, floor, buffer, INSTRUCTIONS, summarize)
        self.conv = self.ledger.create_conversation("c")
        self.convs: dict[str, tuple[model.Turn, ...]] = {self.conv: ()}

    def estimate(self, text: str) -> int:
        """The model's estimate of a request with this input, as things stand."""
        history = [item[2] for item in model.flatten(self.convs[self.conv])]
        return model.estimate(INSTRUCTIONS, history, model.input_items(text))

    def query(self, text: str) -> model.Plan:
        """Send ``text``; assert the ledger decided, sent and stored what the model says."""
        plan = model.plan(self.convs, model.Request(self.conv, text, "query"), self.params)
        reply = asyncio.run(self.ledger.query(Request(text, self.conv)))
        where = f"estimate {plan.estimate}, {self.params}"
        assert reply.compacted == plan.compacted, (
            f"C1: the model {'compacts' if plan.compacted else 'does not compact'} ({where}); "
            f"the ledger {'did' if reply.compacted else 'did not'}"
        )
        call = self.backend.calls[-1]
        if plan.compacted:
            assert call.context == plan.explicit_input, (
                f"C1: inference got {call.context!r}, the model's explicit input is "
                f"{plan.explicit_input!r} ({where})"
            )
        self.convs, _ = model.settle(self.convs, plan, model.Completed(CHUNKS))
        stored = [(i.turn, i.kind, i.content) for i in self.store.items(self.conv)]
        assert stored == model.flatten(self.convs[self.conv]), (
            f"C1: after the request the ledger stores {stored!r}, the model "
            f"{model.flatten(self.convs[self.conv])!r} ({where})"
        )
        return plan

    def close(self) -> None:
        self.store.close()


def padded(program: Program, estimate: int) -> str:
    """An input text whose request the model estimates at exactly ``estimate`` tokens."""
    text = "q"
    while program.estimate(text) < estimate:
        text += "x"
    assert program.estimate(text) == estimate, f"no text estimates at exactly {estimate}"
    return text


OFFSETS = {"one below": -1, "at": 0, "one above": 1}


@pytest.mark.parametrize("where", OFFSETS)
def test_c1_ratio_boundary_through_the_ledger(where: str) -> None:
    """The estimate against ``threshold_ratio * context_window`` (here 0.5 * 400 = 200),
    the floor far below: compacted exactly when the estimate is above 200. Killed: C1's
    ratio side ``>`` turned ``>=`` (check_mutants.py)."""
    program = Program(window=400, ratio=0.5)
    try:
        plan = program.query(padded(program, 200 + OFFSETS[where]))
        assert plan.compacted is (where == "one above")
    finally:
        program.close()


@pytest.mark.parametrize("where", OFFSETS)
def test_c1_floor_boundary_through_the_ledger(where: str) -> None:
    """The estimate against ``token_floor`` (200), the ratio side far below (0.5 * 40):
    compacted exactly when the estimate is above the floor. Killed: C1's floor side ``>``
    turned ``>=`` (check_mutants.py)."""
    program = Program(window=40, ratio=0.5, floor=200)
    try:
        plan = program.query(padded(program, 200 + OFFSETS[where]))
        assert plan.compacted is (where == "one above")
    finally:
        program.close()


@pytest.mark.parametrize("buffer", [0, 1, 2, 3])
def test_c1_buffer_turns_boundary_through_the_ledger(buffer: int) -> None:
    """Every request compacts (threshold 0.5 * 2); request ``n`` finds ``n - 1`` stored
    turns, so the turns beyond the newest ``buffer`` pass from none (nothing folded, no
    marker) to exactly one (a marker folds it) and on, one more per request: each new
    marker folds exactly the turn that left the buffer. Killed: the fold's ``>`` turned
    ``>=``, and the buffer kept one turn more or one fewer (check_mutants.py)."""
    program = Program(window=2, ratio=0.5, buffer=buffer)
    try:
        markers: list[Any] = []
        for n in range(1, buffer + 4):
            plan = program.query(f"q{n}")
            assert plan.compacted
            markers.append(plan.new_marker and (plan.new_marker["first_turn"],
                                                plan.new_marker["last_turn"]))  # fmt: skip
        # before request n, turns 1 .. n-1-buffer are beyond the buffer
        expected = [(n - 1 - buffer,) * 2 if n - 1 > buffer else None
                    for n in range(1, buffer + 4)]  # fmt: skip
        assert markers == expected, f"C1: buffer {buffer}: markers {markers}, not {expected}"
    finally:
        program.close()


BASE: dict[str, Any] = {"context_window": 100, "threshold_ratio": 0.5}


@pytest.mark.parametrize(
    "values",
    [
        {"context_window": 100, "threshold_ratio": 1.0},
        {"context_window": 1, "threshold_ratio": 0.5},
        {**BASE, "token_floor": 0},
        {**BASE, "buffer_turns": 0},
    ],
    ids=["ratio-1", "window-1", "floor-0", "buffer-0"],
)
def test_c1_config_accepts_its_edges(values: dict[str, Any]) -> None:
    """Each configuration value at the edge of its range is valid and kept as given.
    Killed: each range's bound made strict (check_mutants.py)."""
    config = CompactionConfig.from_mapping(values)
    assert {k: getattr(config, k) for k in values} == values


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({**BASE, "buffer_turns": -1}, "buffer_turns"),
        ({"context_window": -1, "threshold_ratio": 0.5}, "context_window"),
        ({"context_window": 100, "threshold_ratio": 1.0000001}, "threshold_ratio"),
    ],
)
def test_c1_config_one_past_its_edges_is_an_error(values: dict[str, Any], field: str) -> None:
    """One step past each edge above is a configuration error naming the field."""
    with pytest.raises(ConfigError, match=field):
        CompactionConfig.from_mapping(values)
