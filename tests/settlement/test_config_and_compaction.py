"""Configuration errors, the token estimate and the C1 trigger at its boundaries."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger.compaction import estimate_text, extractive_summary, plan_request, should_compact
from ledger.config import CompactionConfig, ConfigError
from ledger.items import assistant_message, user_message
from ledger.store import ConversationStore
from model import settlement as model

pytestmark = pytest.mark.properties("C1")


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"context_window": 0, "threshold_ratio": 0.5}, "context_window"),
        ({"context_window": 100, "threshold_ratio": 1.5}, "threshold_ratio"),
        ({"context_window": 100, "threshold_ratio": 0}, "threshold_ratio"),
        ({"context_window": 100, "threshold_ratio": "0.5"}, "threshold_ratio"),
        ({"context_window": True, "threshold_ratio": 0.5}, "context_window"),
        ({"context_window": 100, "threshold_ratio": 0.5, "token_floor": -1}, "token_floor"),
        ({"context_window": 100, "threshold_ratio": 0.5, "buffer_turns": -2}, "buffer_turns"),
        ({"context_window": 100, "threshold_ratio": 0.5, "window": 3}, "window"),
        ({"threshold_ratio": 0.5}, "context_window"),
    ],
)
def test_config_errors_name_the_field(values: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        CompactionConfig.from_mapping(values)


def test_config_defaults() -> None:
    config = CompactionConfig(context_window=100, threshold_ratio=0.5)
    assert (config.token_floor, config.buffer_turns, config.threshold) == (0, 2, 50.0)


@given(st.text(max_size=50))
def test_estimate_is_chars_over_four_rounded_up(text: str) -> None:
    assert estimate_text(text) == model.tokens(text) == (len(text) + 3) // 4


@pytest.mark.parametrize(
    ("window", "ratio", "floor", "estimate", "compacted"),
    [
        (100, 0.5, 0, 50, False),  # at the ratio limit: not over
        (100, 0.5, 0, 51, True),
        (100, 0.5, 80, 80, False),  # at the floor: not over
        (100, 0.5, 80, 81, True),
        (100, 0.5, 80, 60, False),  # over the ratio, under the floor
        (100, 0.75, 10, 75, False),
        (100, 0.75, 10, 76, True),
        # The product is a float (C1 says ratio * window): 0.29 * 100 is
        # 28.999999999999996, so an estimate of 29 is over it.
        (100, 0.29, 0, 29, True),
    ],
)
def test_c1_boundaries(
    window: int, ratio: float, floor: int, estimate: int, compacted: bool
) -> None:
    config = CompactionConfig(context_window=window, threshold_ratio=ratio, token_floor=floor)
    params = model.Params(window, ratio, floor, 2, "", lambda items: "")
    assert should_compact(estimate, config) is compacted
    assert model.compacts(params, estimate) is compacted


def test_plan_folds_old_turns_and_keeps_the_buffer() -> None:
    store = ConversationStore()
    conv = store.create_conversation()
    for n in range(4):
        store.append_turn(
            conv, [("input", user_message(f"u{n}")), ("output", assistant_message(f"a{n}"))]
        )
    config = CompactionConfig(context_window=10, threshold_ratio=0.5, buffer_turns=1)
    new = [user_message("now")]
    plan = plan_request(
        store.items(conv), new, instructions="", config=config, summarizer=lambda i: str(len(i))
    )
    assert plan.compacted and plan.summary is not None
    assert (plan.summary["first_turn"], plan.summary["last_turn"], plan.summary["text"]) == (
        1,
        3,
        "6",
    )
    assert plan.explicit_input == (plan.summary, user_message("u3"), assistant_message("a3"), *new)
    assert plan.original_input == tuple(new)


def test_default_summarizer_has_one_line_per_item() -> None:
    """The marker text stored when no summarizer is given (S6: markers compare exactly)."""
    items = [
        user_message("what   is\n2+2?"),
        assistant_message("four " * 30),
        {"type": "message", "role": "assistant", "refusal": "no"},
        {"type": "function_call", "content": ["a", 1]},
        {"type": "note"},
    ]
    assert extractive_summary(items, width=12).splitlines() == [
        "user: what is 2+2?",
        "assistant: four four fo",
        "assistant: no",
        'function_call: ["a",1]',
        "note: ",
    ]
    assert extractive_summary([]) == ""
