"""The fix audit (ctxaudit/fixes, ctxaudit/fixaudit/), each part seen to fail: a fix
that does not apply, a wrong fix (its regression test passes but it breaks another
property), a failure no fix explains. A toy tree and a fake pytest runner stand in for
gitreins, so these take milliseconds; the real runs are the audit's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ctxaudit import fixes as fixlib
from ctxaudit import targets
from ctxaudit.attribution import EXPLAINED, NOT_EXPLAINED, Attribution, attribute
from ctxaudit.fixaudit import VERIFIED, FixAuditOptions, fix_audit
from ctxaudit.fixes import Edit, Fix, Form
from ctxaudit.replay import parse_blob, ran_through
from ctxaudit.target_report import Finding, TargetReport

BLOB = "You can reproduce this test case by temporarily adding @reproduce_failure('6.1', b'AXic') as a decorator"  # noqa: E501


def tree(tmp_path: Path) -> Path:
    root = tmp_path / "src"
    (root / "engine").mkdir(parents=True)
    (root / "engine" / "a.py").write_text("A = 1\nB = 1\nC = 1\n")
    return root


def test_edits_apply_and_diff(tmp_path: Path) -> None:
    root = tree(tmp_path)
    fix = Fix("X", (Form(">=0.2", (Edit("engine/a.py", "A = 1\n", "A = 2\n"),)),))
    got = fixlib.fixed_copy(root, tmp_path / "fixed", "0.3", [fix])
    assert got.applied == ["X"] and not got.failed
    diff = fixlib.diff_trees(root, got.root)
    assert "-A = 1\n+A = 2\n" in diff and diff.startswith("--- a/engine/a.py")
    assert (root / "engine" / "a.py").read_text().startswith("A = 1")  # the original is untouched


def test_a_fix_that_does_not_apply_is_reported_not_raised(tmp_path: Path) -> None:
    root = tree(tmp_path)
    missing = Fix("M", (Form("*", (Edit("engine/a.py", "Z = 9\n", "Z = 0\n"),)),))
    twice = Fix("T", (Form("*", (Edit("engine/a.py", " = 1\n", " = 0\n"),)),))
    no_file = Fix("F", (Form("*", (Edit("engine/gone.py", "x", "y"),)),))
    patch = Fix("P", (Form("*", patch="no-such.patch"),))
    got = fixlib.fixed_copy(root, tmp_path / "f", "0.3", [missing, twice, no_file, patch])
    assert got.applied == []
    assert "not found" in got.failed["M"] and "found 3 times" in got.failed["T"]
    assert "no such file" in got.failed["F"]
    assert "no-such.patch" in got.failed["P"]
    # all or nothing: a half-applicable fix leaves the file as it was
    half = Fix(
        "H",
        (Form("*", (Edit("engine/a.py", "A = 1\n", "A = 2\n"), Edit("engine/a.py", "Q", "R"))),),
    )  # noqa: E501
    got = fixlib.fixed_copy(root, tmp_path / "h", "0.3", [half])
    assert "H" in got.failed and (got.root / "engine/a.py").read_text() == "A = 1\nB = 1\nC = 1\n"


def test_parse_blob() -> None:
    assert parse_blob(BLOB) == ("6.1", "b'AXic'")
    assert parse_blob("no blob here") is None


def fake_runner(calls: list[Any]) -> Any:
    """Tests whose outcome is a function of the tree's engine/a.py:
    - test_reg (finding X's regression test) passes while A == 1 (the finding reproduces);
    - test_p (property P, the unfixed tree's failure) fails while A == 1;
    - test_q (property Q) fails when B == 2 (what the wrong fix W does);
    - test_new fails always (a bug no fix explains)."""

    def run(tree: str, paths: list[str], env: dict[str, str], replays: dict[str, Any]) -> Any:
        calls.append((tree, tuple(paths), dict(replays)))
        text = (Path(tree) / "engine" / "a.py").read_text()
        fails = {
            "test_reg": "A = 1" not in text,
            "test_p": "A = 1" in text,
            "test_q": "B = 2" in text,
            "test_new": True,
        }
        props = {"test_reg": ["P"], "test_p": ["P"], "test_q": ["Q"], "test_new": ["P"]}
        out = []
        for nodeid, failed in fails.items():
            if not any(nodeid.startswith(p.split("::")[0]) for p in paths) and paths != ["suites"]:
                continue
            if nodeid == "test_reg" and paths == ["suites"]:
                continue
            longrepr = (
                f"AssertionError: {props[nodeid][0]}: {nodeid} broke\n{BLOB}" if failed else ""
            )
            if nodeid in replays and not failed:  # a replayed example that now passes
                failed, longrepr = True, "DidNotReproduce: ... completed successfully."
            outcome = "failed" if failed else "passed"
            out.append({"nodeid": nodeid, "when": "call", "outcome": outcome,
                        "properties": props[nodeid], "longrepr": longrepr})  # fmt: skip
        return out

    return run


def report(known_ids: list[str]) -> TargetReport:
    r = TargetReport("toy", "0.3", "spec", "ci", 1, 0.0, 1)
    r.known = [{"id": i, "property": "P", "affects": True, "repro": "test_reg"} for i in known_ids]
    r.findings = [
        Finding(["P"], "P: test_p broke", "test_p", BLOB),
        Finding(["P"], "P: test_new broke", "test_new", BLOB),
    ]
    return r


FIX_X = Fix("X", (Form("*", (Edit("engine/a.py", "A = 1\n", "A = 2\n"),)),), why="A")
WRONG = Fix("X", (Form("*", (Edit("engine/a.py", "A = 1\nB = 1\n", "A = 2\nB = 2\n"),)),))
NOT_APPLYING = Fix("Y", (Form("*", (Edit("engine/a.py", "nope", "x"),)),))


@pytest.mark.parametrize("wrong", [False, True])
def test_verify_attribute_and_the_fixed_tree(tmp_path: Path, wrong: bool) -> None:
    calls: list[Any] = []
    r = report(["X", "Y", "Z"])
    fixes = {"X": WRONG if wrong else FIX_X, "Y": NOT_APPLYING}
    fix_audit(
        r,
        tree(tmp_path),
        fake_runner(calls),
        FixAuditOptions(["suites"], {"P": "p", "Q": "q"}, tmp_path / "out", fixes=fixes),
    )
    status = {x["id"]: x["status"] for x in r.fixes}
    # a fix that does not apply, and a finding with no fix: reported, with why
    assert status["Y"] == "does not apply" and status["Z"] == "no fix"
    # test_p is X's: replayed on the tree with X's fix alone it passes
    assert [f.test for f in r.attributed] == ["test_p"] and r.attributed[0].owners == ["X"]
    # test_new: no single fix explains it; it stays new and says so
    assert [f.test for f in r.findings] == ["test_new"]
    assert "no single fix explains it" in r.findings[0].attribution
    # the patches: once per target beside the version's folder, the report linking them
    (patch,) = [x["patch"] for x in r.fixes if x.get("patch")]
    assert patch.startswith("../toy-fixes/X-") and patch.endswith(".patch"), patch
    assert (tmp_path / patch.removeprefix("../")).read_text().count("+A = 2") == 1
    assert r.fixed["combined_patch"] == patch  # one fix applied: its patch is the combined
    assert not (tmp_path / "out" / "fixes").exists()
    fixed = {f["test"]: f for f in r.fixed["findings"]}
    assert "test_new" in fixed and fixed["test_new"]["owners"] == []  # new on the fixed tree
    if wrong:  # regression test passes with it, but Q fails, and goes away without it
        assert status["X"] == "breaks another property"
        assert fixed["test_q"]["owners"] == ["X"] and r.fixed["verdicts"]["Q"] == "fails"
    else:
        assert status["X"] == VERIFIED and "test_q" not in fixed
        assert r.fixed["verdicts"]["Q"] == "holds"


def test_a_fix_that_does_not_make_the_property_hold(tmp_path: Path) -> None:
    useless = Fix("X", (Form("*", (Edit("engine/a.py", "C = 1\n", "C = 2\n"),)),))
    r = report(["X"])
    fix_audit(
        r,
        tree(tmp_path),
        fake_runner([]),
        FixAuditOptions(["suites"], {"P": "p", "Q": "q"}, tmp_path / "out", fixes={"X": useless}),
    )
    assert r.fixes[0]["status"] == "does not make the property hold"
    assert not r.attributed and len(r.findings) == 2  # nothing explained


def test_a_failure_that_does_not_replay_without_the_fix_is_attributed_to_none(
    tmp_path: Path,
) -> None:
    """The control: a failure whose replay passes on the unfixed tree too (it depended on
    the run it came from) passes on every single-fix tree; no fix may own it."""
    inner = fake_runner([])

    def run(tree: str, paths: list[str], env: dict[str, str], replays: dict[str, Any]) -> Any:
        out = inner(tree, paths, env, replays)
        if "test_flaky" in paths:  # passes whenever it runs again
            out.append({"nodeid": "test_flaky", "when": "call", "outcome": "passed",
                        "properties": ["P"], "longrepr": ""})  # fmt: skip
        return out

    r = report(["X"])
    r.findings.append(Finding(["P"], "P: test_flaky broke", "test_flaky", ""))
    fix_audit(
        r,
        tree(tmp_path),
        run,
        FixAuditOptions(["suites"], {"P": "p", "Q": "q"}, tmp_path / "out", fixes={"X": FIX_X}),
    )
    assert [f.test for f in r.attributed] == ["test_p"]
    flaky = [f for f in r.findings if f.test == "test_flaky"]
    assert flaky and flaky[0].owners == [] and "control" in flaky[0].attribution
    assert "bin/ctxaudit attribute" in r.attributed[0].rerun and "--fix X" in r.attributed[0].rerun


def replayed(outcome: str, longrepr: str, **rec: Any) -> dict[str, Any]:
    return {"outcome": outcome, "longrepr": longrepr, "replay": rec}


SHAPE = "DidNotReproduce: The shape of the test data has changed in some way"


def test_a_replay_runs_through_only_as_recorded() -> None:
    # a state machine whose failing step passes now runs out of data right after it
    assert ran_through(replayed("failed", SHAPE, choices=9, drawn=9, misaligned_at=None))
    # out of data before the example's end, or a draw that did not fit: another example
    assert not ran_through(replayed("failed", SHAPE, choices=9, drawn=4, misaligned_at=None))
    assert not ran_through(replayed("passed", "", choices=9, drawn=9, misaligned_at=3))
    done = "DidNotReproduce: Expected the test to raise an error, but it completed successfully."
    assert ran_through(replayed("failed", done, choices=9, drawn=9, misaligned_at=None))
    assert not ran_through(replayed("failed", "AssertionError: V1: ...", choices=9, drawn=9))
    assert ran_through({"outcome": "passed", "longrepr": ""})  # a rerun without an example


def test_attribute_reruns_one_attribution(tmp_path: Path) -> None:
    root = tree(tmp_path)
    blob = "b'AXic'"
    text, got = attribute(Attribution(root, "0.3", FIX_X, "test_p", blob, {}), fake_runner([]))
    assert got == EXPLAINED and "without the fix: fails (P: test_p broke)" in text, text
    useless = Fix("X", (Form("*", (Edit("engine/a.py", "C = 1\n", "C = 2\n"),)),))
    text, got = attribute(Attribution(root, "0.3", useless, "test_p", blob, {}), fake_runner([]))
    assert got == NOT_EXPLAINED and "not explained" in text
    text, got = attribute(
        Attribution(root, "0.3", NOT_APPLYING, "test_p", blob, {}), fake_runner([])
    )
    assert got == NOT_EXPLAINED and "does not apply" in text


def test_an_attribution_whose_test_did_not_run_could_not_check(tmp_path: Path) -> None:
    """A test no run reports (no such test), one skipped, one that ended in ctxaudit's own
    error: no verdict, never "does not fail" without the fix and "fails" with it."""
    root = tree(tmp_path)
    text, got = attribute(Attribution(root, "0.3", FIX_X, "test_x", None, {}), fake_runner([]))
    assert got == "could not check" and "does not fail" not in text, text
    assert "without the fix: the test did not run" in text

    inner = fake_runner([])

    def broken(tree_: str, paths: list[str], env: dict[str, str], replays: Any) -> Any:
        out = inner(tree_, paths, env, replays)
        if "A = 2" in (Path(tree_) / "engine" / "a.py").read_text():  # the fixed copy
            for t in out:
                t.update(outcome="failed", could_not_check="TypeError: the harness")
        return out

    text, got = attribute(Attribution(root, "0.3", FIX_X, "test_p", None, {}), broken)
    assert got == "could not check" and "with X: could not check (TypeError" in text, text


@pytest.mark.parametrize(
    ("blob", "test", "says"),
    [
        ("b'%%not base64'", "tests/gitreins/test_findings.py::x", "no example Hypothesis can"),
        ("AEEBQR8BQQEBQQ8BQQ8A", "tests/gitreins/test_findings.py::x", "is not the b'...'"),
        (None, "tests/gitreins/no_such_test.py::test_x", "no test file"),
    ],
)
def test_attribute_rejects_a_bad_blob_or_test_before_any_work(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    blob: str | None,
    test: str,
    says: str,
) -> None:
    from ctxaudit import audit
    from ctxaudit.audit import AttributeRequest, run_attribute

    def no_work(*args: Any, **kw: Any) -> Any:
        raise AssertionError("the attribution started")

    monkeypatch.setattr(audit, "run_pytest", no_work)
    monkeypatch.setattr(targets.get("gitreins"), "resolve", no_work)
    assert run_attribute(AttributeRequest("gitreins==0.14.0", "GR-GAP-062", test, blob)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and says in err, err


def test_attribute_command_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    from ctxaudit.audit import AttributeRequest, run_attribute

    assert run_attribute(AttributeRequest("ledger", "GR-GAP-062", "t")) == 2
    err = capsys.readouterr().err
    audited = ", ".join(t.name for t in targets.all_targets() if t.fix_audit)
    assert audited.startswith("gitreins, lightspeed-stack, langchain") and "ledger" not in audited
    assert f"one version of a target with a fix audit ({audited}), got 'ledger'" in err


def test_the_fixed_tree_runs_under_each_seed(tmp_path: Path) -> None:
    """Seeds: the fully fixed tree's suites run under the report's seed and each seed
    given; a property that fails under one seed only fails there."""
    inner = fake_runner([])
    seen: list[str | None] = []

    def run(tree: str, paths: list[str], env: dict[str, str], replays: dict[str, Any]) -> Any:
        out = inner(tree, paths, env, replays)
        if paths == ["suites"]:
            seen.append(env.get("CTXAUDIT_SEED"))
            if env.get("CTXAUDIT_SEED") == "8":  # Q fails under seed 8 only
                failed = "AssertionError: Q: seed 8"
                out.append({"nodeid": "test_q", "when": "call", "outcome": "failed",
                            "properties": ["Q"], "longrepr": failed})  # fmt: skip
        return out

    r = report(["X"])
    fix_audit(
        r,
        tree(tmp_path),
        run,
        FixAuditOptions(
            ["suites"], {"P": "p", "Q": "q"}, tmp_path / "out", fixes={"X": FIX_X}, seeds=(7, 8, 1)
        ),
    )
    assert r.fixed["seeds"] == [1, 7, 8] and seen[:3] == [None, "7", "8"]
    assert r.fixed["verdicts"]["Q"] == "fails" and not r.fixed["ok"]


def test_a_regression_run_holds_its_finding_to_reproduce(tmp_path: Path) -> None:
    """The finding reproduces on the version (the audit's check): its regression test
    must hold it to there whether or not the finding is registered for the version, so
    the run of the copy with its fix names it in CTXAUDIT_FINDINGS_ASSUMED (lightspeed's
    regression tests skip an unregistered finding otherwise, and verify nothing)."""
    envs: list[dict[str, str]] = []
    inner = fake_runner([])

    def run(tree: str, paths: list[str], env: dict[str, str], replays: dict[str, Any]) -> Any:
        if "test_reg" in paths:
            envs.append(dict(env))
        return inner(tree, paths, env, replays)

    fix_audit(
        report(["X"]),
        tree(tmp_path),
        run,
        FixAuditOptions(["suites"], {"P": "p", "Q": "q"}, tmp_path / "out", fixes={"X": FIX_X}),
    )
    assert envs and all(e.get("CTXAUDIT_FINDINGS_ASSUMED") == "X" for e in envs)


def test_attribution_only_splits_known_from_new_as_the_fix_audit_does(tmp_path: Path) -> None:
    """``--no-fixes`` (``attribution_only``): the same failures attributed to the same
    findings as the whole fix audit, with no fix verified, no fully fixed tree, no patch;
    and no fix is tried once every failure that can be attributed has its owner."""
    fixes = {"X": FIX_X, "Y": NOT_APPLYING}
    full = report(["X", "Y"])
    props = {"P": "p", "Q": "q"}
    fix_audit(full, tree(tmp_path), fake_runner([]),
              FixAuditOptions(["suites"], props, tmp_path / "full", fixes=fixes))  # fmt: skip
    calls: list[Any] = []
    only = report(["X", "Y"])
    options = FixAuditOptions(
        ["suites"], props, tmp_path / "only" / "toy-0.3", fixes=fixes, attribution_only=True
    )
    fix_audit(only, tree(tmp_path / "again"), fake_runner(calls), options)
    assert [(f.test, f.owners) for f in only.attributed] == [("test_p", ["X"])]
    assert [(f.test, f.owners) for f in full.attributed] == [("test_p", ["X"])]
    assert [f.test for f in only.findings] == [f.test for f in full.findings] == ["test_new"]
    assert only.attributed[0].rerun == full.attributed[0].rerun
    assert not only.fixes and not only.fixed and not (tmp_path / "only").exists()
    # the control and X's tree; neither runs a regression test nor the suites
    assert len(calls) == 2 and all("test_reg" not in c[1] and "suites" not in c[1] for c in calls)
