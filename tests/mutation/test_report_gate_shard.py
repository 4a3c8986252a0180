"""Shard split, gate and the mutation-testing-elements report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mutation import engine, report


def m(i: int, kind: str, status: str, **kw: Any) -> dict[str, Any]:
    base = dict(
        id=f"toy.py:f:{kind}:op:{i:012d}",
        target="toy",
        file="toy.py",
        function="f",
        kind=kind,
        operator="op",
        line=2,
        column=5,
        end_line=2,
        end_column=9,
        original="a > b",
        replacement="a >= b",
        properties=["B2"],
        catalogue=None,
        description="",
        status=status,
        reason="",
        killed_by="tests/t.py::test" if status == "killed" else None,
        seconds=0.1,
        tests_completed=None,
        diff="--- a/toy.py\n+++ b/toy.py\n-    return a > b\n+    return a >= b\n",
    )
    base.update(kw)
    return base


def doc(mutants: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "target": "toy",
        "version": "1",
        "root": "/x",
        "sources": {"toy.py": "def f(a, b):\n    return a > b\n"},
        "mutants": mutants,
        "timings": {"setup": 1.0, "baseline": 1.0, "mutation": 2.0, "total": 4.0},
        "not_applicable": [],
        "excluded": {},
    }


def test_shard_split_is_a_deterministic_partition():
    ids = [f"f.py:g:other:string:{i:x}" for i in range(500)]
    n = 4
    shards = [{i for i in ids if engine.shard_of(i, n) == k} for k in range(n)]
    assert set().union(*shards) == set(ids)
    assert sum(map(len, shards)) == len(ids)
    assert all(shards)  # none empty for 500 ids
    assert shards == [{i for i in ids if engine.shard_of(i, n) == k} for k in range(n)]


def test_gate_fails_with_one_unlisted_gated_survivor():
    d = report.apply_gate(
        doc([m(1, "removed-write", "killed"), m(2, "wrong-comparison", "survived")]), {}
    )
    assert not d["gate"]["passed"]
    assert d["gate"]["failures"] == [m(2, "x", "x")["id"].replace(":x:", ":wrong-comparison:")]


def test_gate_passes_when_the_survivor_is_a_listed_equivalent():
    survivor = m(2, "wrong-comparison", "survived")
    d = report.apply_gate(
        doc([m(1, "removed-write", "timeout"), survivor]), {survivor["id"]: "why"}
    )
    assert d["gate"]["passed"]
    assert survivor["status"] == "equivalent"


def test_other_kinds_and_flaky():
    d = report.apply_gate(doc([m(1, "other", "survived")]), {})
    assert d["gate"]["passed"]
    d = report.apply_gate(doc([m(1, "removed-write", "flaky")]), {})
    assert not d["gate"]["passed"]


def test_catalogue_mutant_is_gated_whatever_its_kind():
    d = report.apply_gate(doc([m(1, "other", "survived", catalogue="LCORE-1")]), {})
    assert not d["gate"]["passed"]


def test_stale_equivalent_is_reported():
    d = report.apply_gate(
        doc([m(1, "other", "killed")]), {m(1, "other", "x")["id"]: "r", "gone": "r"}
    )
    assert len(d["stale_equivalents"]) == 2


def test_report_validates_and_shows_survivor_diff(tmp_path: Path):
    d = report.apply_gate(
        doc([m(1, "removed-write", "killed"), m(2, "wrong-comparison", "survived")]), {}
    )
    js, md = report.write_reports(d, tmp_path)
    mte = json.loads(js.read_text())
    assert report.validate_mte(mte) == []
    statuses = [x["status"] for x in mte["files"]["toy.py"]["mutants"]]
    assert statuses == ["Killed", "Survived"]
    assert mte["files"]["toy.py"]["mutants"][1]["mutatorName"] == "wrong-comparison:op"
    text = md.read_text()
    assert "Gate: FAILED" in text and "+    return a >= b" in text and "**B2**" in text


def test_validator_catches_missing_fields():
    assert "missing thresholds" in report.validate_mte({"schemaVersion": "2", "files": {}})
    bad = {
        "schemaVersion": "2",
        "thresholds": {"high": 80, "low": 60},
        "files": {"a.py": {"language": "python", "source": "", "mutants": [{"id": "1"}]}},
    }
    errors = report.validate_mte(bad)
    assert any("mutatorName" in e for e in errors) and any("status" in e for e in errors)


def test_peer_comparison_side_by_side(tmp_path: Path):
    ms = [
        m(1, "removed-write", "killed"),
        m(2, "removed-write", "killed"),
        m(3, "wrong-comparison", "killed"),
        m(4, "other", "survived"),
        m(5, "wrong-comparison", "survived"),  # listed equivalent: out of both denominators
    ]
    d = doc(ms)
    d["peer"] = {
        "name": "toy's own tests",
        "root": "/peer",
        "tests": ["tests/test_a.py"],
        "selection_reason": "all",
        "baseline": {"tests": 9, "failing": ["tests/test_a.py::test_gone"]},
        "timings": {"baseline": 0.5, "mutation": 1.0, "total": 2.0},
        "results": {
            ms[0]["id"]: ["killed", "tests/test_a.py::t"],
            ms[1]["id"]: ["survived", None],
            ms[2]["id"]: ["no-coverage", None],
            ms[3]["id"]: ["killed", "tests/test_a.py::t2"],
            ms[4]["id"]: ["killed", "tests/test_a.py::t3"],
        },
    }
    report.apply_gate(d, {ms[4]["id"]: "same behaviour"})
    ps = report.peer_summary(d)
    assert ps is not None
    assert ps["by_kind"]["removed-write"] == {"mutants": 2, "ours": 2, "peer": 1}
    assert ps["by_kind"]["wrong-comparison"] == {"mutants": 1, "ours": 1, "peer": 0}
    assert ps["total"] == {"mutants": 4, "ours": 3, "peer": 2}
    assert ps["killed_only_by_ours"] == 2
    assert ps["killed_only_by_peer"] == [ms[3]["id"]]
    js, md = report.write_reports(d, tmp_path)
    assert json.loads(js.read_text())["config"]["peer"]["total"]["peer"] == 2
    text = md.read_text()
    assert "| removed-write | 2 | 2 | 100.0% | 1 | 50.0% |" in text
    assert f"- `{ms[3]['id']}` (other)" in text and "tests/test_a.py::test_gone" in text


def test_peer_that_could_not_run_is_reported_not_hidden(tmp_path: Path):
    d = doc([m(1, "removed-write", "killed")])
    d["peer"] = {"name": "toy's own tests", "error": "the index has no sdist for version 1"}
    report.apply_gate(d, {})
    assert d["gate"]["passed"]
    _js, md = report.write_reports(d, tmp_path)
    assert "Not run: the index has no sdist for version 1" in md.read_text()


@pytest.mark.parametrize(
    ("per_second", "said"),
    [(1.4, "(1.4/s)"), (0.03, "(33.3 s a mutant)"), (0.0, "(no mutant ran)")],
)
def test_the_summary_line_says_seconds_a_mutant_when_a_mutant_takes_longer(
    per_second: float, said: str
) -> None:
    """A lightspeed-stack run (about 30 s a mutant) read "0.0/s"."""
    from mutation.orchestrate import MutationResult

    result = MutationResult(
        "toy", "1", True, [], {"other": dict.fromkeys(report.DETECTED, 1)}, {}, 1, 10.0, per_second
    )
    assert said in result.summary_line()


def test_a_survivors_rerun_command_names_its_tree_and_fixes() -> None:
    """mutation.md's "Rerun it alone": the spec under the target's own option (a path as
    reports show it, never the machine's), the fixes as asked for, the pass-1 seed."""
    from ctxaudit.replay import invocation
    from mutation.engine import REPO
    from mutation.orchestrate import _rerun_base
    from mutation.report import rerun

    assert _rerun_base("lightspeed-stack", "lightspeed-stack@main", ["all"]) == [
        "--target", "lightspeed-stack", "--lightspeed", "lightspeed-stack@main", "--fix", "all",
    ]  # fmt: skip
    assert _rerun_base("gitreins", str(REPO), []) == ["--target", "gitreins", "--gitreins", "."]
    doc = {"target": "ledger", "rerun": _rerun_base("ledger", None, []), "seeds": [4, 5, 6]}
    assert rerun(doc, "ledger/owner.py:f:other:x:1") == (
        f"{invocation()} mutation run --target ledger --seed 4 --only ledger/owner.py:f:other:x:1"
    )  # the command of the mode the report is written in (bin/ctxaudit, or ctxaudit installed)


def test_mutation_md_says_no_mutant_ran_when_every_verdict_was_reused(tmp_path: Path) -> None:
    """A run whose verdicts all came from the cache has no rate (it read "0.0 mutants/s")."""
    from tests.audit import golden_inputs

    doc = golden_inputs.mutation_doc_small()
    doc["timings"] = {"total": 8.0, "baseline": 0.0, "mutation": 0.0}
    text = report.to_markdown(doc)
    assert "mutants in 8 s (baseline 0.0 s, mutants 0 s, no mutant ran)" in text, text[:600]


def test_a_gate_that_fails_only_for_want_of_verdicts_is_could_not_check() -> None:
    """Gated mutants in error (ctxaudit's own error in their runs) leave the gate
    undecided: ``python -m mutation run`` exits 2 then, never 1 (a verdict)."""
    from mutation.orchestrate import MutationResult

    def result(passed: bool, failures: list[str], in_error: list[str]) -> MutationResult:
        return MutationResult("toy", "1", passed, failures, {}, {}, 1, 1.0, 1.0, in_error=in_error)

    assert result(False, ["a"], ["a"]).unchecked
    assert not result(False, ["a", "b"], ["a"]).unchecked  # b survived: a verdict
    assert result(False, [], []).unchecked  # the run reported an error of its own
    assert not result(True, [], []).unchecked
