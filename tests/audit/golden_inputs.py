"""Fixed inputs of the golden-file tests (tests/audit/test_golden.py).

Every report ctxaudit writes is rendered from these and compared with the files in
``tests/audit/golden/``. They reuse the report fixtures (``fixtures/make_fixtures.py``)
and add what those leave out: a peer comparison, branch coverage, survivors with a
diff, stale equivalents, sampled mutants, a lightspeed-stack report, a timing report.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import shutil
from pathlib import Path
from typing import Any

from ctxaudit.audit import Finding, TargetReport
from ctxaudit.timing import AuditTime
from mutation import report

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures" / "reports"


def _make_fixtures() -> Any:
    spec = importlib.util.spec_from_file_location(
        "make_fixtures", HERE / "fixtures" / "make_fixtures.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MAKE = _make_fixtures()


# ----------------------------------------------------------------------------- findings.md


def _target_report(data: dict[str, Any]) -> TargetReport:
    return TargetReport(
        target=data["target"],
        version=data["version"],
        spec=data["spec"],
        profile=data["profile"],
        seed=data["seed"],
        elapsed_s=data["elapsed_s"],
        exit_status=data["exit_status"],
        verdicts=dict(data["verdicts"]),
        findings=[Finding(**f) for f in data["findings"]],
        known=copy.deepcopy(data["known"]),
        suite="abc1234",
    )


def findings_reports() -> dict[str, TargetReport]:
    """golden file name -> the report it is rendered from."""
    gr = _target_report(MAKE.findings_json("gitreins", "0.14.0", MAKE.GR_PROPS))
    ledger = _target_report(MAKE.findings_json("ledger", "git-abc1234", MAKE.LEDGER_PROPS))
    ls = TargetReport(
        target="lightspeed-stack",
        version="0.6.0",
        spec="lightspeed-stack==0.6.0",
        profile="ci",
        seed=None,
        elapsed_s=98.2,
        exit_status=1,
        verdicts={"S1": "fails", "S2": "holds", "S4": "not checked", "S9": "fails", "C1": "holds"},
        findings=[
            Finding(
                ["S9"],
                "S9: the answer differs | after compaction",
                "tests/lightspeed/inenv/test_lockstep.py::test_lockstep",
                "Falsifying example: run(\n    requests=['a', 'b'],\n)",
            )
        ],
        known=[
            {
                "id": "LS-UNSTORED-STORED",
                "property": "S1",
                "summary": "A store=false request is stored.",
                "region": "store=false",
                "repro": "tests/lightspeed/inenv/programs.py::unstored_stored",
                "registered": True,
                "affects": True,
            },
            {
                "id": "LS-OTHER",
                "property": "S6",
                "summary": "Something else.",
                "region": "streaming",
                "repro": "tests/lightspeed/inenv/programs.py::other",
                "registered": False,
                "affects": False,
            },
        ],
        suite="abc1234",
    )
    _with_fix_audit(gr)
    return {
        "findings-gitreins.md": gr,
        "findings-ledger.md": ledger,
        "findings-lightspeed.md": ls,
    }


def _fix_audit(version: str) -> dict[str, Any]:
    """What the fix audit adds to a gitreins report: a verified fix, one that does not
    apply, a finding with no fix, one attributed failure, the fully fixed tree."""
    fixes = [
        {"id": "GR-GAP-062", "property": "V7", "status": "fix verified",
         "detail": "regression test reproduces without the fix, not with it",
         "patch": "fixes/GR-GAP-062.patch", "why": "the valve reads the metered sum"},
        {"id": "GR-V2-UNLIMITED-COMPACTS", "property": "V2", "status": "does not apply",
         "detail": "engine/evaluator.py: the text to replace is not found ('threshold = ')"},
        {"id": "GR-POC-14-TRANSPORT-COMPACTS", "property": "V6", "status": "not needed",
         "detail": "does not reproduce"},
    ]  # fmt: skip
    attributed = [
        {"properties": ["V7"], "message": "V7: the input cap 31 was reached after 0 compactions",
         "test": "tests/gitreins/test_v7_valve_protects_cap.py::test_v7_valve_protects_cap",
         "reproduction": "", "owners": ["GR-GAP-062"],
         "attribution": "explained by the fix of GR-GAP-062",
         "rerun": f"CTXAUDIT_FINDINGS=GR-GAP-062 bin/ctxaudit attribute --target "
                  f"gitreins=={version} --fix GR-GAP-062 --profile ci "
                  "'tests/gitreins/test_v7_valve_protects_cap.py::test_v7_valve_protects_cap'"},
    ]  # fmt: skip
    fixed = {
        "applied": ["GR-GAP-062"],
        "combined_patch": "fixes/combined.patch",
        "verdicts": {"B1": "holds", "V2": "fails", "V7": "holds"},
        "findings": [{"properties": ["V2"], "message": "V2: compacts while unlimited",
                      "test": "tests/gitreins/test_valve_lockstep.py::test_valve_lockstep",
                      "reproduction": "", "owners": [],
                      "attribution": "new: present with every fix and without each one"}],
        "ok": False,
        "elapsed_s": 61.5,
        "seeds": [1234, 7, 8],  # the fixed tree under three seeds (--seed given three times)
    }  # fmt: skip
    return {"fixes": fixes, "attributed": attributed, "fixed": fixed}


def _with_fix_audit(r: TargetReport) -> None:
    audit = _fix_audit(r.version)
    r.fixes = audit["fixes"]
    r.attributed = [Finding(**f) for f in audit["attributed"]]
    r.fixed = audit["fixed"]


# ----------------------------------------------------------------------------- mutation.md


def mutation_doc_full() -> dict[str, Any]:
    """The fixtures' gitreins 0.17.1 run with every optional section of mutation.md."""
    doc = MAKE.mutation_doc("gitreins", "0.17.1", "engine/eval_cap.py", "same value both ways")
    ids = [m["id"] for m in doc["mutants"]]
    doc["mutants"][2]["diff"] = "--- a\n+++ b\n-    self.used += n\n+    pass\n"
    doc["mutants"][2]["reason"] = "rechecked: survived again"
    eq = {ids[7]: "same value both ways", "engine/eval_cap.py:gone:other:x:0001": "stale"}
    doc["seeds"] = [0, 1, 2]  # the seed recheck ran: robust and seed-dependent kills
    doc["mutants"][0]["robust"] = "robust"
    doc["mutants"][4]["robust"] = "seed-dependent"
    doc["mutants"][4]["robust_reason"] = "killed under seed 0, not under seeds 1, 2"
    doc = report.apply_gate(doc, eq)
    doc.update(
        suite="abc1234",
        rerun=["--target", "gitreins", "--gitreins", "gitreins==0.17.1", "--fix", "all"],
        shards=2,
        other_sample=0.25,
        other_not_sampled=7,
        only=["eval_cap"],
        coverage={
            "files": {
                "engine/eval_cap.py": {
                    "covered_statements": 40,
                    "statements": 44,
                    "covered_branches": 18,
                    "branches": 20,
                }
            },
            "totals": {
                "covered_statements": 40,
                "statements": 44,
                "covered_branches": 18,
                "branches": 20,
            },
        },
        not_applicable=[{"id": "GR-NEWER", "versions": ">=0.18.0"}],
        excluded={"logging calls": 3, "type annotations": 5},
        findings_excluded="GR-V2-UNLIMITED-COMPACTS",
        deselected=[["tests/gitreins/test_history.py", "release history, not this version"]],
        baseline={"tests": 120, "failing": ["tests/gitreins/test_x.py::test_flaky"]},
        errors=["shard 2: worker exited with status -9"],
        cache={"reused": 3, "ran": 8},
    )
    results = {i: ["survived", None] for i in ids}
    results[ids[0]] = ["killed", "tests/test_eval_cap.py::test_meter"]
    results[ids[2]] = ["killed", "tests/test_eval_cap.py::test_used"]  # ours missed it
    results[ids[4]] = ["timeout", None]
    doc["peer"] = {
        "name": "gitreins' tests",
        "root": "/nonexistent/gitreins-0.17.1",
        "tests": ["tests/test_eval_cap.py", "tests/test_evaluator.py"],
        "selection_reason": "the test files that import engine.eval_cap or engine.evaluator",
        "deselected": [],
        "baseline": {
            "tests": 64,
            "failing": ["tests/test_evaluator.py::test_needs_conftest"],
            "functions_reached": [],
        },
        "timings": {"baseline": 3.25, "mutation": 21.0, "total": 25.0},
        "results": results,
    }
    return doc


def mutation_doc_small() -> dict[str, Any]:
    """The ledger run: no catalogue hits, the peer suite not run, coverage not measured."""
    doc = MAKE.mutation_doc("ledger", "git-abc1234", "ledger/owner.py", "unreachable")
    doc.update(
        coverage={"error": "no coverage data"},
        findings_excluded="none",
        peer={"name": "ledger's tests", "error": "no peer suite is configured"},
    )
    return doc


def mutation_docs() -> dict[str, dict[str, Any]]:
    return {"mutation-full.md": mutation_doc_full(), "mutation-small.md": mutation_doc_small()}


# ----------------------------------------------------------------------------- matrix


def matrix_reports(root: Path) -> Path:
    """The report fixtures under ``root/reports``, gitreins 0.17.1 with the full mutation
    run (peer included) and the ledger with the small one (no mutation.md)."""
    out = root / "reports"
    shutil.copytree(FIXTURES, out)
    for version in ("0.13.0", "0.14.0"):  # with the fix audit; the other versions without
        path = out / f"gitreins-{version}" / "findings.json"
        path.write_text(json.dumps(json.loads(path.read_text()) | _fix_audit(version)))
        (path.parent / "fixes").mkdir()
        (path.parent / "fixes" / "combined.patch").write_text("--- a/x\n+++ b/x\n")
    report.write_reports(mutation_doc_full(), out / "gitreins-0.17.1")
    _, md = report.write_reports(mutation_doc_small(), out / "ledger-git-abc1234")
    md.unlink()
    return out


# ----------------------------------------------------------------------------- audit-time.md


def audit_time() -> AuditTime:
    clock = AuditTime(
        command="ctxaudit audit --target gitreins>=0.13.0 --target ledger",
        profile="thorough",
        jobs=2,
        started="2026-01-01 00:00:00 UTC",
        cores=2,
        machine="Linux-test-x86_64",
    )
    clock.properties_wall_s = 400.0
    clock.mutation_wall_s = 1500.5
    clock.total_s = 1910.0
    gr = clock.target("gitreins-0.17.1")
    gr.properties_s, gr.mutation_s, gr.mutants, gr.mutant_runs_s, gr.peer_s = (
        170.0,
        1000.0,
        400,
        600.0,
        120.0,
    )
    gr.fixes_s, gr.verdicts_reused = 90.0, 12
    led = clock.target("ledger-0.1.0")
    led.properties_s, led.mutation_s, led.mutants, led.mutant_runs_s = 190.0, 500.5, 90, 300.0
    led.properties_reused = led.mutation_reused = True
    led.verdicts_reused = 90
    clock.target("lightspeed-stack-0.6.0").properties_s = 95.4
    return clock
