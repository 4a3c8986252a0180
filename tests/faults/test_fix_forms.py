"""A harness error in the fix audit's own runs is no verdict: real pytest runs (with the
audit's plugins, ``ctxaudit.pytest_results`` and ``ctxaudit.pytest_outcomes``) of a
regression test and a property test whose harness cannot observe the fixed tree. The
fix is "not verified: could not check", never verified; the fully fixed tree's property
is "could not check", never "holds", and no finding comes of it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from ctxaudit.audit import render_markdown
from ctxaudit.fixaudit import VERIFIED, FixAuditOptions, fix_audit
from ctxaudit.fixes import Edit, Fix, Form
from ctxaudit.target_report import TargetReport

ROOT = Path(__file__).resolve().parents[2]

#: the suite: test_reg holds the finding to reproduce (passes while A == 1); test_p checks
#: the property. On the fixed tree (A == 2) the harness cannot read what the tree stored.
SUITE = """
import os
from pathlib import Path

import pytest

from ctxaudit.outcomes import observing


def _stored() -> dict:
    text = (Path(os.environ["TOY_TREE"]) / "engine" / "a.py").read_text()
    if "A = 1" in text:
        return {"turn": 1}
    return {}  # the fixed tree answers in a shape the harness does not know


@pytest.mark.properties("P")
def test_reg():
    with observing("the stored turn"):
        turn = _stored()["turn"]
    assert turn == 1, "P: the finding no longer reproduces"


@pytest.mark.properties("P")
def test_p():
    with observing("the stored turn"):
        turn = _stored()["turn"]
    assert turn == 2, "P: the turn is lost"
"""


def run_pytest(tmp: Path) -> Any:
    suite = tmp / "suite" / "test_toy.py"
    suite.parent.mkdir(parents=True)
    suite.write_text(textwrap.dedent(SUITE))

    def run(tree: str, paths: list[str], env: dict[str, str], replays: dict[str, Any]) -> Any:
        results = tmp / "results.json"
        cmd = [sys.executable, "-m", "pytest", *[f"{suite}::{p}" for p in paths], "-q"]
        cmd += ["-p", "no:cacheprovider", "-p", "ctxaudit.pytest_results"]
        cmd += ["-p", "ctxaudit.pytest_outcomes"]
        child = {**os.environ, "PYTHONPATH": str(ROOT), "TOY_TREE": tree,
                 "CTXAUDIT_RESULTS": str(results), "PYTEST_ADDOPTS": ""}  # fmt: skip
        subprocess.run(cmd, cwd=suite.parent, env=child, capture_output=True, check=False)
        tests = json.loads(results.read_text())["tests"]
        results.unlink()
        return [{**t, "nodeid": t["nodeid"].split("::")[-1]} for t in tests]

    return run


@pytest.mark.fault("harness error in fix run")
def test_a_harness_error_in_the_fix_runs_is_no_verdict(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    (root / "engine").mkdir(parents=True)
    (root / "engine" / "a.py").write_text("A = 1\n")
    fix = Fix("X", (Form("*", (Edit("engine/a.py", "A = 1\n", "A = 2\n"),)),), why="A")
    r = TargetReport("gitreins", "0.3", "spec", "ci", 1, 0.0, 1)
    r.known = [{"id": "X", "property": "P", "summary": "x", "region": "x", "repro": "test_reg",
                "registered": True, "affects": True}]  # fmt: skip
    fix_audit(
        r,
        root,
        run_pytest(tmp_path),
        FixAuditOptions(["test_p"], {"P": "p"}, tmp_path / "out", fixes={"X": fix}),
    )
    (row,) = r.fixes
    assert row["status"] != VERIFIED and row["status"] == "not verified", row
    assert row["detail"].startswith("could not check (CouldNotCheck: could not observe the "), row
    assert "KeyError" in row["detail"], row
    # the fully fixed tree: no verdict on P, no finding, not "every property holds"
    assert r.fixed["verdicts"] == {"P": "could not check"}, r.fixed["verdicts"]
    assert r.fixed["findings"] == [] and not r.fixed["ok"]
    text = render_markdown(r)
    assert "every property holds" not in text and "failures remain" not in text
    assert "| X | P | fix verified |" not in text and "**not verified** | could not check" in text
