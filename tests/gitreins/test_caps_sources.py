"""B6 by where a cap's text stands in ``.gitreins/config.yaml``: the ``evaluator:``
section's own keys, its legacy ``cap:`` string, the legacy ``guards: eval_cap:`` string
(read when the evaluator section has no ``cap:``), and the ``defaults:`` section, the
fallback for every cap the evaluator section does not state. Each cap parses to what the
text that governs it says. Fixed cases (no drawn examples): each one meets one source on
every run, so the verdict does not depend on a seed."""

from __future__ import annotations

from typing import Any

import pytest

from ctxaudit.targets.gitreins.config import run_caps
from ctxaudit.targets.gitreins.tree import GitreinsModules
from model.config import parse_iterations, parse_legacy, parse_seconds, token_cap
from tests.gitreins.test_caps_config import expected, same_cap

pytestmark = [pytest.mark.gitreins, pytest.mark.properties("B6")]

#: a ``defaults:`` section that states every cap, each different from gitreins' built-in
DEFAULTS = {
    "max_iterations": 37,
    "max_time": "7m",
    "max_input_tokens": "300k",
    "max_output_tokens": "20k",
    "tool_call_weight": 0.25,
}

#: (config file sections other than ``evaluator:``, the ``evaluator:`` section)
CASES: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({"defaults": DEFAULTS}, {}),  # every cap from defaults:
    ({"defaults": DEFAULTS}, {"max_time": "2h"}),  # one from evaluator:, the rest defaults:
    ({"defaults": DEFAULTS}, {"max_iterations": 12, "max_output_tokens": "9k"}),
    ({"guards": {"eval_cap": "40/20m/150k/30k"}}, {}),  # the legacy string under guards:
    ({"guards": {"eval_cap": "40/20m"}}, {"max_input_tokens": "5k"}),
    ({"guards": {"eval_cap": "40/20m/150k/30k"}}, {"cap": "12/5m/8k/6k"}),  # evaluator wins
]


def says(others: dict[str, Any], section: dict[str, Any]) -> dict[str, float]:
    """The caps the governing text says: a legacy string (``evaluator.cap``, else
    ``guards.eval_cap``) for the fields it names, else ``defaults:``; then the evaluator
    section's own keys over either."""
    legacy = section.get("cap") or others.get("guards", {}).get("eval_cap")
    want: dict[str, float] = {}
    if legacy:
        named = parse_legacy(legacy)
        assert named is not None, f"a case uses a legacy string the model does not read: {legacy}"
        want |= named
    else:
        d = others.get("defaults", {})
        if "max_iterations" in d:
            want["max_iterations"] = parse_iterations(d["max_iterations"])  # type: ignore[assignment]
        if "max_time" in d:
            want["max_seconds"] = parse_seconds(d["max_time"])  # type: ignore[assignment]
        for key in ("max_input_tokens", "max_output_tokens"):
            if key in d:
                want[key] = token_cap(str(d[key]), f"defaults.{key}")
        if "tool_call_weight" in d:
            want["tool_call_weight"] = float(d["tool_call_weight"])
    return want | expected({k: v for k, v in section.items() if k != "cap"})


def test_b6_caps_from_each_source(gitreins: GitreinsModules) -> None:
    sections = [{**section, "file": others} for others, section in CASES]
    wrong = []
    for (others, section), got in zip(CASES, run_caps(gitreins.tree.root, sections), strict=True):
        if "error" in got:
            wrong.append(f"{others} evaluator: {section} -> {got['error']}")
            continue
        want = says(others, section)
        diff = {k: (got[k], w) for k, w in want.items() if not same_cap(got[k], w)}
        if diff:
            shown = ", ".join(f"{k}: got {g!r}, text says {w!r}" for k, (g, w) in diff.items())
            wrong.append(f"{others} evaluator: {section} -> {shown}")
    assert not wrong, "B6: caps do not parse to what their text says:\n  " + "\n  ".join(wrong)
