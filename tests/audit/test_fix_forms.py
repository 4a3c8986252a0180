"""Which form of a fix a tree gets follows the tree's text, not its version's name
(``ctxaudit.fixes.choose``), and the fix audit keeps its three outcomes apart: a run
whose test records say ``could_not_check`` verifies nothing and is no verdict, and a fix
phase with no fix to apply says why. A toy tree, synthetic forms and a fake pytest
runner (the records ``ctxaudit/pytest_results.py`` writes): milliseconds. The same on a
real lightspeed-stack tree: ``test_fix_forms_lightspeed.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ctxaudit import fixes as fixlib
from ctxaudit.audit import render_markdown
from ctxaudit.fixaudit import VERIFIED, FixAuditOptions, fix_audit
from ctxaudit.fixes import Edit, Fix, Form
from ctxaudit.target_report import Finding, TargetReport

A = "engine/a.py"
TEXT = "A = 1\nB = 1\n\ndef f():\n    return A\n"


def tree(tmp_path: Path, text: str = TEXT) -> Path:
    root = tmp_path / "src"
    (root / "engine").mkdir(parents=True)
    (root / A).write_text(text)
    return root


def edit(old: str, new: str) -> Edit:
    return Edit(A, old, new)


# ------------------------------------------------------------------ choosing a form


def test_a_tree_no_form_names_gets_the_form_its_text_takes(tmp_path: Path) -> None:
    """A commit after main, an unreleased version: named by no form, fixed by the one
    whose edits apply (the version list written for main does not keep it out)."""
    root = tree(tmp_path)
    fix = Fix(
        "X",
        (
            Form(frozenset({"cd1a0484"}), (edit("A = 1\nB = 2\n", "A = 3\n"),)),
            Form(frozenset({"0.6.0"}), (edit("A = 1\n", "A = 2\n"),)),
        ),
    )
    got = fixlib.fixed_copy(root, tmp_path / "fixed", "e6bcd873", [fix])
    assert got.applied == ["X"], got.failed
    assert (got.root / A).read_text().startswith("A = 2\n")
    # a specifier is no key either: a dev version outside it gets the form that applies
    gated = Fix("G", (Form("<0.15.0", (edit("B = 1\n", "B = 2\n"),)),))
    got = fixlib.fixed_copy(root, tmp_path / "dev", "0.18.0.dev1", [gated])
    assert got.applied == ["G"] and "B = 2\n" in (got.root / A).read_text()


def test_the_forms_named_for_the_version_are_tried_first(tmp_path: Path) -> None:
    root = tree(tmp_path)
    first = Form(frozenset({"0.6.0"}), (edit("A = 1\n", "A = 6\n"),))
    second = Form(frozenset({"0.7.0"}), (edit("A = 1\n", "A = 7\n"),))
    fix = Fix("X", (first, second))
    assert fixlib.choose(fix, root, "0.7.0") is second  # both apply: the named one wins
    assert fixlib.choose(fix, root, "0.6.0") is first
    assert fixlib.choose(fix, root, "e6bcd873") is first  # neither named: as declared
    # a named form that does not apply does not stop the others from being tried
    stale = Form(frozenset({"0.7.0"}), (edit("A = 9\n", "A = 7\n"),))
    assert fixlib.choose(Fix("X", (stale, first)), root, "0.7.0") is first
    # unnamed: the form that makes more of the change first ("*" names no version)
    wide = Form("*", (edit("A = 1\n", "A = 2\n"),))
    more = Form(frozenset({"0.6.0"}), (edit("A = 1\n", "A = 2\n"), edit("B = 1\n", "B = 2\n")))
    assert fixlib.choose(Fix("X", (wide, more)), root, "e6bcd873") is more
    assert fixlib.choose(Fix("X", (wide, more)), root, "0.6.0") is more


def test_anchors_tell_apart_forms_whose_edits_are_the_same(tmp_path: Path) -> None:
    """Two forms with the same edited lines, one adding an import from OGX and one from
    llama-stack: the tree's own import decides, not its name."""
    root = tree(tmp_path, "from llama_stack_client import X\n" + TEXT)
    ogx = Form("*", (edit("A = 1\n", "from ogx_api import M\nA = 1\n"),),
               anchors=((A, "from ogx_client import "),))  # fmt: skip
    llama = Form("*", (edit("A = 1\n", "from llama_stack_api import M\nA = 1\n"),),
                 anchors=((A, "from llama_stack_client import "),))  # fmt: skip
    assert fixlib.choose(Fix("X", (ogx, llama)), root, "e6bcd873") is llama
    with pytest.raises(fixlib.NotApplied, match="anchor 1 of 1, engine/a.py.*ogx_client"):
        fixlib.choose(Fix("X", (ogx,)), root, "e6bcd873")


def test_when_no_form_applies_each_form_says_which_edit_did_not_match(tmp_path: Path) -> None:
    root = tree(tmp_path, TEXT.replace("def f():\n", "def f():\n    trace()\n"))
    fix = Fix(
        "X",
        (
            Form(
                frozenset({"cd1a0484"}),
                (edit("A = 1\n", "A = 2\n"), edit("def f():\n    return A\n", "x\n")),
            ),
            Form(frozenset({"0.6.0"}), (Edit("engine/gone.py", "a", "b"),)),
        ),
    )
    got = fixlib.fixed_copy(root, tmp_path / "fixed", "e6bcd873", [fix])
    why = got.failed["X"]
    assert "version e6bcd873" not in why and "no form of the fix applies" in why
    # per form: its versions, which edit, its file, the line where its text stops matching
    assert (
        "the form for cd1a0484: edit 2 of 2, engine/a.py: the text to replace is not found "
        "(its line 2 of 2 is where it stops matching: 'return A')"
    ) in why, why
    assert "the form for 0.6.0: edit 1 of 1, engine/gone.py: no such file" in why, why
    assert (got.root / A).read_text() == (root / A).read_text()  # all or nothing


def test_a_reason_is_chosen_only_for_the_versions_it_is_written_for(tmp_path: Path) -> None:
    root = tree(tmp_path)
    reason = Form(frozenset({"0.6.0"}), reason="the server, a dependency")
    fix = Fix("X", (reason, Form(frozenset({"0.7.0"}), (edit("A = 1\n", "A = 2\n"),))))
    assert fixlib.choose(fix, root, "0.6.0") is reason
    assert fixlib.choose(fix, root, "e6bcd873").edits  # another tree: the edits apply
    got = fixlib.fixed_copy(root, tmp_path / "f", "0.6.0", [fix])
    assert got.failed["X"] == "no fix on this version: the server, a dependency"
    lone = Fix("X", (reason,))
    with pytest.raises(fixlib.NotApplied, match="not written for e6bcd873"):
        fixlib.choose(lone, root, "e6bcd873")
    anywhere = Fix("X", (Form("*", reason="never"),))
    assert fixlib.choose(anywhere, root, "e6bcd873").reason == "never"


# ------------------------------------------------------------- the fix audit's outcomes

BLOB = "You can reproduce this test case by temporarily adding @reproduce_failure('6.1', b'AXic') as a decorator"  # noqa: E501
WHY = "CouldNotCheck: could not observe the stored rows: KeyError: 'items' (at harness.py:9)"
FIX_X = Fix("X", (Form("*", (edit("A = 1\n", "A = 2\n"),)),), why="A")


def record(nodeid: str, outcome: str, longrepr: str = "", **more: Any) -> dict[str, Any]:
    return {"nodeid": nodeid, "when": "call", "outcome": outcome, "properties": ["P"],
            "longrepr": longrepr} | more  # fmt: skip


def runner(regression: list[dict[str, Any]], suite: list[dict[str, Any]] | None = None) -> Any:
    """The regression test ``test_reg`` ends as ``regression`` on a fixed copy (it
    passes, reproducing, on the unfixed one); the fixed tree's suite as ``suite``
    (default: test_p passes); the unfixed tree's failure test_p fails unfixed and
    passes fixed."""

    def run(tree: str, paths: list[str], env: dict[str, str], replays: dict[str, Any]) -> Any:
        fixed = "A = 1" not in (Path(tree) / A).read_text()
        out: list[dict[str, Any]] = []
        if "test_reg" in paths:
            out += regression if fixed else [record("test_reg", "passed")]
        if "test_p" in paths:
            failed = f"AssertionError: P: test_p broke\n{BLOB}"
            out.append(
                record("test_p", "failed", "DidNotReproduce: ... completed successfully.")
                if fixed
                else record("test_p", "failed", failed)
            )
        if paths == ["suites"]:
            out += suite if suite is not None else [record("test_p", "passed")]
        return out

    return run


def report(affects: bool = True, **known: Any) -> TargetReport:
    r = TargetReport("gitreins", "0.3", "spec", "ci", 1, 0.0, 1)
    r.known = [
        {"id": "X", "property": "P", "summary": "x", "region": "x", "repro": "test_reg",
         "registered": True, "affects": affects} | known
    ]  # fmt: skip
    if affects:
        r.findings = [Finding(["P"], "P: test_p broke", "test_p", BLOB)]
    return r


def audit(
    tmp_path: Path, r: TargetReport, run: Any, fixes: dict[str, Fix] | None = None
) -> list[str]:
    ticks: list[str] = []
    fix_audit(
        r,
        tree(tmp_path),
        run,
        FixAuditOptions(
            ["suites"],
            {"P": "p"},
            tmp_path / "out",
            ticker=ticks.append,
            fixes={"X": FIX_X} if fixes is None else fixes,
        ),
    )
    return ticks


HARNESS_ERRORS = {
    # a could-not-check whose text still holds an AssertionError: read as "verified"
    "call, AssertionError in its text": [
        record("test_reg", "failed", "AssertionError: P: ...\nCouldNotCheck", could_not_check=WHY)
    ],
    "call, passed": [record("test_reg", "passed", could_not_check=WHY)],
    "setup error": [
        record("test_reg", "failed", "E   AssertionError", when="setup", could_not_check=WHY)
    ],
    "teardown error after the call": [
        record("test_reg", "failed", "AssertionError: P: no longer reproduces"),
        record("test_reg", "failed", "E   OSError", when="teardown", could_not_check=WHY),
    ],
}


@pytest.mark.parametrize("case", list(HARNESS_ERRORS))
def test_a_regression_run_that_could_not_check_verifies_nothing(tmp_path: Path, case: str) -> None:
    r = report()
    audit(tmp_path, r, runner(HARNESS_ERRORS[case]))
    (row,) = r.fixes
    assert row["status"] == "not verified" and row["status"] != VERIFIED, row
    assert row["detail"] == f"could not check ({WHY})", row


def test_the_fully_fixed_tree_could_not_check_what_its_harness_could_not(
    tmp_path: Path,
) -> None:
    suite = [
        record("test_p", "failed", "AssertionError: P: harness", could_not_check=WHY),
        {**record("test_q", "passed"), "properties": ["Q"]},
    ]
    r = report()
    fix_audit(
        r,
        tree(tmp_path),
        runner([record("test_reg", "failed", "AssertionError: P")], suite),
        FixAuditOptions(["suites"], {"P": "p", "Q": "q"}, tmp_path / "out", fixes={"X": FIX_X}),
    )
    fixed = r.fixed
    assert fixed["verdicts"] == {"P": "could not check", "Q": "holds"}, fixed["verdicts"]
    assert not fixed["findings"] and not fixed["ok"]  # no finding, and no "holds" either
    assert [u["nodeid"] for u in fixed["unchecked"]] == ["test_p"]
    text = render_markdown(r)
    assert "could not check 1 of its tests" in text and "failures remain" not in text
    assert f"could not check `test_p` (P), not a finding: {WHY}" in text


def test_a_fixed_tree_whose_suite_did_not_run_has_no_verdict(tmp_path: Path) -> None:
    r = report()
    fix_audit(
        r,
        tree(tmp_path),
        runner([record("test_reg", "failed", "AssertionError: P")], []),
        FixAuditOptions(["suites"], {"P": "p"}, tmp_path / "out", fixes={"X": FIX_X}),
    )
    assert r.fixed["verdicts"] == {"P": "could not check"} and not r.fixed["findings"]


@pytest.mark.parametrize("where", ["control", "fixed copy"])
def test_replays_that_could_not_check_attribute_nothing(tmp_path: Path, where: str) -> None:
    """A replay ctxaudit could not check neither reproduces the failure (on the unfixed
    copy, the control) nor shows the fix explains it (on the copy with the fix), even
    when the record reads as "ran through" (it passed)."""
    inner = runner([record("test_reg", "failed", "AssertionError: P")])

    def run(tree: str, paths: list[str], env: dict[str, str], replays: dict[str, Any]) -> Any:
        fixed = "A = 1" not in (Path(tree) / A).read_text()
        out = inner(tree, paths, env, replays)
        # unfixed: the failure's own text, but the harness erred; fixed: "passed"
        broken = (
            record("test_p", "passed", could_not_check=WHY)
            if fixed
            else record("test_p", "failed", f"AssertionError: P: test_p broke\n{WHY}",
                        could_not_check=WHY)
        )  # fmt: skip
        if fixed == (where == "fixed copy"):
            out = [broken if t["nodeid"] == "test_p" else t for t in out]
        return out

    r = report()
    audit(tmp_path, r, run)
    assert not r.attributed and [f.test for f in r.findings] == ["test_p"]
    if where == "control":
        assert "could not check its replay" in r.findings[0].attribution
    else:
        assert "no single fix explains it" in r.findings[0].attribution


def test_no_fix_applied_says_no_known_finding_reproduces(tmp_path: Path) -> None:
    r = report(affects=False)
    ticks = audit(tmp_path, r, runner([]))
    why = "no known finding reproduces on this version"
    assert r.fixed["applied"] == [] and r.fixed["none_applied"] == why
    assert any(f"(0 fixes: {why})" in t for t in ticks), ticks
    assert f"Fixes applied: none, because {why}." in render_markdown(r)


def test_no_fix_applied_names_the_edit_that_did_not_match(tmp_path: Path) -> None:
    r = report()
    stale = Fix("X", (Form(frozenset({"cd1a0484"}), (edit("A = 1\nB = 9\n", "A = 2\n"),)),))
    ticks = audit(tmp_path, r, runner([]), fixes={"X": stale})
    why = r.fixed["none_applied"]
    assert why.startswith("no fix applies: X (does not apply: no form of the fix applies"), why
    assert "edit 1 of 1, engine/a.py" in why and "'B = 9'" in why, why
    assert any("0 fixes: no fix applies: X" in t for t in ticks), ticks
    assert "Fixes applied: none, because no fix applies: X" in render_markdown(r)
    reasoned = Fix("X", (Form("*", reason="the server, a dependency"),))
    r = report()
    audit(tmp_path / "2", r, runner([]), fixes={"X": reasoned})
    assert "the server, a dependency" in r.fixed["none_applied"], r.fixed


def test_no_fix_applied_says_which_finding_could_not_be_checked(tmp_path: Path) -> None:
    """After a harness failure in the known findings' check no finding reproduces: the
    fix phase says the check could not tell, and the finding's row is no "not needed"."""
    r = report(affects=False, could_not_check=WHY)
    audit(tmp_path, r, runner([]))
    assert r.fixed["none_applied"] == (
        f"no known finding reproduces on this version; ctxaudit could not check X ({WHY})"
    )
    assert r.fixes[0]["status"] == "not verified" and WHY in r.fixes[0]["detail"]
