"""Regression tests for the registered findings (ctxaudit/targets/gitreins/findings.py).

Each asserts that its finding still reproduces on the target, so it fails
when the target is fixed: then remove the finding from the registry. They
run only for the versions a finding is registered for.
"""

from __future__ import annotations

import pytest

from ctxaudit.targets.gitreins import findings
from ctxaudit.targets.gitreins.config import run_caps, run_case
from ctxaudit.targets.gitreins.loop import (
    Called,
    Finished,
    compactions,
    ended_reason,
    is_compacted,
    replay,
)
from ctxaudit.targets.gitreins.tree import GitreinsModules
from model.config import Caps
from model.valve import Answer, Failure

pytestmark = pytest.mark.gitreins


def registered_or_skip(mods: GitreinsModules, finding_id: str) -> None:
    if finding_id not in {f.id for f in findings.registered("gitreins", mods.tree.version)}:
        pytest.skip(f"{finding_id} is not registered for gitreins {mods.tree.version}")


def test_every_finding_has_its_regression_test() -> None:
    names = {name for name in globals() if name.startswith("test_gr_")}
    for f in findings.FINDINGS:
        path, _, name = f.repro.partition("::")
        assert path == "tests/gitreins/test_findings.py" and name in names, f"{f.id}: {f.repro}"


def test_gr_v2_unlimited_compacts(gitreins: GitreinsModules) -> None:
    registered_or_skip(gitreins, "GR-V2-UNLIMITED-COMPACTS")
    seen = replay(gitreins, Caps(max_input_tokens=-1), steps=[Answer(prompt=5, writes=(None,))])
    assert compactions(seen) == 1, "the unlimited budget no longer compacts: fixed?"


def test_gr_b3_loop_calls_llm_at_cap(gitreins: GitreinsModules) -> None:
    registered_or_skip(gitreins, "GR-B3-LOOP-CALL-AT-CAP")
    caps = Caps(max_iterations=3.0, tool_call_weight=1.0, max_input_tokens=10**6)
    # One call with two tool calls: credit 1 + 1 + 1 = 3 >= 3 before the second call.
    seen = replay(gitreins, caps, steps=[Answer(prompt=1, writes=(None, None))])
    assert isinstance(seen[-1], Called), "no LLM call at the cap any more: fixed?"
    seen = replay(gitreins, caps, steps=[Answer(prompt=1, writes=(None, None)), Answer(prompt=7)])
    assert isinstance(seen[-1], Finished) and ended_reason(seen[-1].verdict) == "cap"
    # With the valve due at that moment the loop first compacts, for a call that cannot
    # happen (thorough profile, seed 314115651): the meters reset, the credit stays.
    caps = Caps(max_iterations=3.0, tool_call_weight=1.0, max_input_tokens=20)
    seen = replay(gitreins, caps, steps=[Answer(prompt=19, writes=(None, None))])
    assert isinstance(seen[-1], Called) and is_compacted(seen[-1].messages), seen[-1]


def test_gr_b3_fractional_iterations_truncated(gitreins: GitreinsModules) -> None:
    registered_or_skip(gitreins, "GR-B3-FRACTIONAL-ITERATIONS")
    caps = Caps(max_iterations=2.5, max_input_tokens=10**6)
    # After two calls the credit is 2.0 < 2.5: B3 allows a third.
    seen = replay(gitreins, caps, steps=[Answer(prompt=1, writes=(None,))] * 2)
    assert isinstance(seen[-1], Finished), "a third call is made now: fixed?"
    assert "Cap exceeded" in seen[-1].verdict.summary


def test_gr_v8_threshold_unvalidated(gitreins: GitreinsModules) -> None:
    registered_or_skip(gitreins, "GR-V8-THRESHOLD-UNVALIDATED")
    # A ratio written as a string crashes the loop after the first call...
    got = run_case(gitreins.tree.root, "0.8", 1000, 800)
    assert got.raised_before_first_call is None and "ValueError" in got.ended, got
    # ...after allocating len("0.8") * max_input_tokens bytes: a 1e9 budget exhausts 1.5 GiB.
    got = run_case(gitreins.tree.root, "0.8", 10**9, 1)
    assert "MemoryError" in got.ended or got.ended.startswith("killed"), got
    # A number outside (0, 1) is used as-is, without a warning: 1.5 never fires.
    got = run_case(gitreins.tree.root, 1.5, 1000, 900)
    assert got.compacted == [False, False], got
    assert not any("compaction_threshold" in w for w in got.warnings), got


def test_gr_b6_decimal_time_ignored(gitreins: GitreinsModules) -> None:
    registered_or_skip(gitreins, "GR-B6-DECIMAL-TIME")
    got = run_caps(gitreins.tree.root, [{"max_time": "1.5h"}, {"max_time": "90m"}])
    assert got[0]["max_seconds"] == -1.0, got  # 1.5h ignored: still unlimited
    assert got[1]["max_seconds"] == 5400.0, got  # the same cap as whole minutes works


def test_gr_b6_spaced_token_unit(gitreins: GitreinsModules) -> None:
    registered_or_skip(gitreins, "GR-B6-SPACED-TOKEN-UNIT")
    got = run_caps(
        gitreins.tree.root, [{"max_input_tokens": "200 k"}, {"cap": "100/30m/200k/50 k"}]
    )
    assert got[0]["max_input_tokens"] != 200_000, got  # ignored
    assert (got[1]["max_input_tokens"], got[1]["max_output_tokens"]) == (-1, 200_000), got


def test_gr_b6_legacy_minutes(gitreins: GitreinsModules) -> None:
    registered_or_skip(gitreins, "GR-B6-LEGACY-MINUTES")
    got = run_caps(gitreins.tree.root, [{"cap": "100/30m/200k/1m"}, {"cap": "100/30m/200k/1M"}])
    assert (got[0]["max_input_tokens"], got[0]["max_output_tokens"]) == (-1, 200_000), got
    assert (got[1]["max_input_tokens"], got[1]["max_output_tokens"]) == (200_000, 1_000_000), got


def test_gr_b6_float_truncation(gitreins: GitreinsModules) -> None:
    registered_or_skip(gitreins, "GR-B6-FLOAT-TRUNCATION")
    got = run_caps(gitreins.tree.root, [{"max_input_tokens": "4.1M", "max_output_tokens": "32.3k"}])
    assert (got[0]["max_input_tokens"], got[0]["max_output_tokens"]) == (4_099_999, 32_299), got


def test_gr_gap_062_valve_reads_largest_prompt(gitreins: GitreinsModules) -> None:
    registered_or_skip(gitreins, "GR-GAP-062")
    steps = [Answer(prompt=4, writes=(None,))] * 3  # sum 12 >= cap 10; no prompt > 5
    seen = replay(gitreins, Caps(max_input_tokens=10), ratio=0.5, steps=steps)
    assert compactions(seen) == 0 and isinstance(seen[-1], Finished), seen[-1]
    assert "Input token budget" in seen[-1].verdict.summary


def test_gr_poc_14_transport_failure_compacts(gitreins: GitreinsModules) -> None:
    registered_or_skip(gitreins, "GR-POC-14-TRANSPORT-COMPACTS")
    caps = Caps(max_input_tokens=10**6)
    seen = replay(gitreins, caps, steps=[Failure(text="connection refused", transport=True)])
    assert isinstance(seen[-1], Called) and compactions(seen) == 1, seen[-1]


def test_gr_v6_client_error_compacts(gitreins: GitreinsModules) -> None:
    registered_or_skip(gitreins, "GR-V6-CLIENT-ERROR-COMPACTS")
    caps = Caps(max_input_tokens=10**6)
    for status, text in ((401, "Unauthorized"), (403, "Forbidden"), (404, "Not Found")):
        seen = replay(gitreins, caps, steps=[Failure(text=text, status=status)])
        assert isinstance(seen[-1], Called) and compactions(seen) == 1, (status, seen[-1])


def test_gr_v6_status_ignored_for_keywords(gitreins: GitreinsModules) -> None:
    registered_or_skip(gitreins, "GR-V6-STATUS-IGNORED-FOR-KEYWORDS")
    caps = Caps(max_input_tokens=10**6)
    rate_limit = (
        "Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): "
        "Limit 30000, Used 29000, Requested 2000."
    )
    for failure in (
        Failure(text=rate_limit, status=429),
        Failure(text="maximum capacity exceeded", status=503),
    ):
        seen = replay(gitreins, caps, steps=[failure])
        assert isinstance(seen[-1], Called) and compactions(seen) == 1, (failure, seen[-1])
    # the same statuses without a keyword end the run: the text decides, not the status
    seen = replay(gitreins, caps, steps=[Failure(text="Too Many Requests", status=429)])
    assert isinstance(seen[-1], Finished) and ended_reason(seen[-1].verdict) == "llm-failure"


def test_gr_b6_fractional_tokens_truncated(gitreins: GitreinsModules) -> None:
    registered_or_skip(gitreins, "GR-B6-FRACTIONAL-TOKENS")
    got = run_caps(
        gitreins.tree.root,
        [
            {"max_input_tokens": "1.5"},
            {"max_output_tokens": "0.0001k"},
            {"env": {"GITREINS_MAX_INPUT_TOKENS": "2.5"}},
            {"cap": "100/30m/1.5/2k"},
        ],
    )
    assert [g.get("error") for g in got] == [None] * 4, got  # no configuration error
    assert got[0]["max_input_tokens"] == 1, got  # '1.5' truncated
    assert got[1]["max_output_tokens"] == 0, got  # '0.0001k' truncated to 0: no cap at all
    assert got[2]["max_input_tokens"] == 2, got
    assert got[3]["max_input_tokens"] == 1, got
