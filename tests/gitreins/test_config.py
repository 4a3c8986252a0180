"""V8: compaction_threshold as it reaches gitreins from .gitreins/config.yaml.

Each case runs in a child process with a memory limit. The model
(model.config.valve_ratio) says what a value means: a ratio in (0, 1); 0.90
with a warning for a number outside it; a configuration error naming the key,
raised before the first LLM call, for anything that is not a number.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import pytest

from ctxaudit.targets.gitreins import findings
from ctxaudit.targets.gitreins.config import run_case
from ctxaudit.targets.gitreins.tree import GitreinsModules
from model.config import ConfigError, valve_ratio

pytestmark = [pytest.mark.gitreins, pytest.mark.properties("V8")]

BUDGET = 1000
# Values a user might write: numbers, numbers as strings, out of range, not numbers.
VALUES = [0.9, 0.5, 0.75, "0.8", " 0.6 ", 1.5, 1, 0, -0.2, "nan", "high", "", None, True, [0.5]]


@pytest.mark.parametrize("raw", VALUES, ids=repr)
def test_v8_compaction_threshold(gitreins: GitreinsModules, raw: object) -> None:
    for f in findings.registered("gitreins", gitreins.tree.version):
        if f.scope == "threshold" and f.in_region(raw):
            pytest.skip(f"in the region of registered finding {f.id}")
    try:
        ratio, warn = valve_ratio(raw)
    except ConfigError:
        ratio, warn = math.nan, False
    first = 0 if math.isnan(ratio) else int(BUDGET * ratio)
    got = run_case(gitreins.tree.root, raw, BUDGET, first)
    assert not got.ended.startswith("killed"), f"V8: compaction_threshold={raw!r}: {got.ended}"
    if math.isnan(ratio):
        assert (
            got.raised_before_first_call and "compaction_threshold" in got.raised_before_first_call
        ), (
            f"V8: compaction_threshold={raw!r} is not a number: expected a configuration error "
            f"naming the key before the first LLM call, got {got}"
        )
        return
    assert got.raised_before_first_call is None, (
        f"V8: {raw!r} is valid, got {got.raised_before_first_call}"
    )
    # The meter sits at the threshold after the first call, one over it after the second.
    assert got.compacted == [False, True], (
        f"V8/V1: compaction_threshold={raw!r} means ratio {ratio}: expected no compaction at "
        f"{first} tokens and one at {first + 1}; got {got.compacted} (ended: {got.ended})"
    )
    warned = any("compaction_threshold" in w for w in got.warnings)
    assert warned == warn, (
        f"V8: compaction_threshold={raw!r}: warning expected: {warn}, logged: {warned}"
    )


def test_a_case_leaves_no_temporary_folder(
    gitreins: GitreinsModules, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A case's child ends in os._exit, which runs no cleanup: the loop's workdir it made
    was left in the temporary folder, one per case (768 in four hours of this suite)."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    got = run_case(gitreins.tree.root, 0.5, BUDGET, 500)
    assert got.ended and not got.ended.startswith("killed"), got
    assert list(tmp_path.iterdir()) == []
