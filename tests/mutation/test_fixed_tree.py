"""``python -m mutation run --fix`` / ``ctxaudit audit --mutate fixed``: the mutants are
of a copy of the tree with the known findings' fixes applied, so the regions those
findings carve out of the released tree are checked too.

Here on the pinned gitreins (0.17.1, where eleven findings reproduce, each with a fix):
the copy holds the fix's lines and the plan mutates them; a fix that is unknown, has no
form or does not apply is an error, never a partly fixed tree; the regions left out lose
the fixed findings and the environment is as before afterwards. One end-to-end run of a
single mutant is ``test_fixed_run_reports_the_fixes`` (about 20 s).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ctxaudit import targets
from ctxaudit.fixes import Edit, Fix, Form
from mutation import orchestrate
from mutation.engine import MutationError
from mutation.fixed_tree import fixed_tree, leave_out_unfixed
from mutation.options import RunOptions

V2 = "GR-V2-UNLIMITED-COMPACTS"
V2_LINE = "if self.eval_cap.max_input_tokens <= 0:"


def test_fixed_copy_is_what_gets_mutated(tmp_path: Path) -> None:
    found, applied = fixed_tree("gitreins", "", [V2], tmp_path / "tree")
    assert applied == [V2]
    source = (found.root / "engine" / "evaluator.py").read_text()
    assert V2_LINE in source
    released = orchestrate.resolve("gitreins", "")
    assert V2_LINE not in (released.root / "engine" / "evaluator.py").read_text()
    assert (found.version, found.copy_dir) == (released.version, released.copy_dir)
    # the work copy takes the released tree's place: same runtime as the released tree
    assert found.runtime == released.runtime


def test_all_takes_every_fix_of_the_targets_findings(tmp_path: Path) -> None:
    _found, applied = fixed_tree("gitreins", "", ["all"], tmp_path / "tree")
    assert V2 in applied
    assert all(fid.startswith("GR-") for fid in applied)  # never another target's fixes


def test_ledger_has_no_fix_to_apply(tmp_path: Path) -> None:
    with pytest.raises(MutationError, match="no fix has a form with edits"):
        fixed_tree("ledger", "", ["all"], tmp_path / "tree")


def test_unknown_fix_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(MutationError, match="GR-NOPE: no such fix"):
        fixed_tree("gitreins", "", [V2, "GR-NOPE"], tmp_path / "tree")


def test_fix_that_does_not_apply_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = Fix(V2, (Form("*", (Edit("engine/evaluator.py", "no such text\n", "x\n"),)),))
    monkeypatch.setattr(targets, "fixes", lambda: {V2: broken})
    with pytest.raises(MutationError, match="a fix does not apply.*no such text"):
        fixed_tree("gitreins", "", [V2], tmp_path / "tree")


def test_fix_without_a_form_for_the_version_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = Fix(V2, (Form("<0.1", (Edit("engine/evaluator.py", "a", "b"),)),))
    monkeypatch.setattr(targets, "fixes", lambda: {V2: elsewhere})
    with pytest.raises(MutationError, match="no form with edits for gitreins 0.17.1"):
        fixed_tree("gitreins", "", [V2], tmp_path / "tree")


def test_regions_left_out_lose_the_fixed_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXAUDIT_FINDINGS", f"{V2},GR-B3-LOOP-CALL-AT-CAP")
    leave_out_unfixed("gitreins", "0.17.1", [V2])
    assert os.environ["CTXAUDIT_FINDINGS"] == "GR-B3-LOOP-CALL-AT-CAP"
    leave_out_unfixed("gitreins", "0.17.1", ["GR-B3-LOOP-CALL-AT-CAP"])
    assert os.environ["CTXAUDIT_FINDINGS"] == "none"
    # unset: the version's registered findings, less the fixed one
    monkeypatch.delenv("CTXAUDIT_FINDINGS")
    leave_out_unfixed("gitreins", "0.17.1", [V2])
    left = os.environ["CTXAUDIT_FINDINGS"].split(",")
    assert V2 not in left and "GR-V8-THRESHOLD-UNVALIDATED" in left


def test_fixed_run_reports_the_fixes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One mutant of the fix's own line, on the fixed tree: the report names the fixes,
    the run left out no fixed region, and the caller's environment is unchanged."""
    monkeypatch.setenv("CTXAUDIT_FINDINGS", V2)
    found, _ = fixed_tree("gitreins", "", [V2], tmp_path / "probe")
    from mutation import engine
    from mutation.config import target_config

    plan = engine.build_plan("gitreins", target_config("gitreins"), found.root, found.version)
    lines = (found.root / "engine" / "evaluator.py").read_text().splitlines()
    line = next(n for n, text in enumerate(lines, 1) if V2_LINE in text)
    on_fix = [
        m.id
        for m in plan.mutants
        if (m.file, m.line, m.kind) == ("engine/evaluator.py", line, "wrong-comparison")
    ]
    assert on_fix, "the fix's comparison is not mutated"
    options = RunOptions(
        fixes=(V2,), only=tuple(on_fix[:1]), seeds=(0,), coverage=False, cache=False
    )
    res = orchestrate.run("gitreins", "", tmp_path / "out", options)
    assert os.environ["CTXAUDIT_FINDINGS"] == V2
    doc = json.loads((tmp_path / "out" / "mutation.json").read_text())
    md = (tmp_path / "out" / "mutation.md").read_text()
    assert "**Mutated: the fully fixed tree.**" in md and V2 in md
    assert res.total == 1
    del doc  # the mutation-testing-elements report; the gate is res's
    # V2's region is checked on the fixed tree: the mutant of the fix's guard is killed
    assert res.gate_passed, res.gate_failures
