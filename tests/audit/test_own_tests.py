"""A fix must pass the harness's own tests except those that pin the bug, each named by
its form (``ctxaudit/fixaudit/own_tests.py``): the fix audit runs them on the unfixed
and the fully fixed trees, names the pinned ones, blames each broken one on the fixes it
fails with alone, and says "could not check" when they did not run. Milliseconds: the
suites and the own tests are functions of the tree's text."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from ctxaudit.audit import render_markdown
from ctxaudit.fixaudit import FixAuditOptions, fix_audit
from ctxaudit.fixes import Edit, Fix, Form
from ctxaudit.suite_run import OwnRun
from ctxaudit.target_report import TargetReport
from tests.audit.test_fixes import tree

#: X's fix pins the harness's tests of the bug (``own_pin``: each parametrization) and a
#: test it does not change; Z's breaks a test that has nothing to do with its finding, and
#: one that X names (a pin of X's is no excuse for Z)
PINS = ("own_pin", "own_shared", "own_gone")
FIX_X = Fix("X", (Form("*", (Edit("engine/a.py", "A = 1\n", "A = 2\n"),), pins=PINS),))
FIX_Z = Fix("Z", (Form("*", (Edit("engine/a.py", "C = 1\n", "C = 2\n"),)),))


def suites(tree: str, paths: list[str], env: dict[str, str], replays: Any) -> Any:
    """Every property holds on the fully fixed tree; each finding's regression test
    (``test_reg``) fails with its fix (``CTXAUDIT_FINDINGS_ASSUMED``)."""
    text = (Path(tree) / "engine" / "a.py").read_text()
    if paths == ["suites"]:
        return [{"nodeid": "test_p", "when": "call", "outcome": "passed", "properties": ["P"],
                 "longrepr": ""}]  # fmt: skip
    fixed = {"X": "A = 2" in text, "Z": "C = 2" in text, "W": "B = 2" in text}[
        env["CTXAUDIT_FINDINGS_ASSUMED"]
    ]
    outcome, longrepr = ("failed", "AssertionError: fixed?") if fixed else ("passed", "")
    return [{"nodeid": "test_reg", "when": "call", "outcome": outcome, "properties": ["P"],
             "longrepr": longrepr}]  # fmt: skip


def own(calls: list[tuple[str, tuple[str, ...]]]) -> Any:
    def run(tree: Path, only: Sequence[str]) -> OwnRun:
        calls.append((tree.name, tuple(only)))
        text = (tree / "engine" / "a.py").read_text()
        fails = {
            "own_pin[1]": "A = 2" in text,  # the harness's test that asserts the bug
            "own_broken": "C = 2" in text,  # Z's fix breaks it
            "own_shared": "A = 2" in text or "C = 2" in text,  # each fix alone fails it
            "own_release": True,  # fails on the release already
            "own_ok": False,
        }
        return OwnRun(
            [
                {"nodeid": n, "when": "call", "outcome": "failed" if f else "passed"}
                for n, f in fails.items()
                if not only or n in only
            ]  # fmt: skip
        )

    return run


def audited(tmp_path: Path, runner: Any, fixes: dict[str, Fix] | None = None) -> TargetReport:
    fixes = fixes or {"X": FIX_X, "Z": FIX_Z}
    r = TargetReport("ledger", "0.3", "ledger", "ci", 1, 0.0, 0)  # any registered target
    r.known = [
        {"id": i, "property": "P", "summary": i, "region": i, "repro": "test_reg",
         "registered": True, "affects": True}
        for i in fixes
    ]  # fmt: skip
    options = FixAuditOptions(
        ["suites"], {"P": "p"}, tmp_path / "out" / "ledger-0.3", fixes=fixes, own_tests=runner
    )
    fix_audit(r, tree(tmp_path), suites, options)
    return r


def test_a_fix_that_breaks_an_own_test_is_named_and_a_pinned_one_is_not(tmp_path: Path) -> None:
    calls: list[tuple[str, tuple[str, ...]]] = []
    r = audited(tmp_path, own(calls))
    assert r.fixed["ok"] and r.fixed["applied"] == ["X", "Z"]
    assert r.fixed["own_tests"] == {
        "ran": 5,
        "failing_unfixed": ["own_release"],
        "pinned": {"own_pin[1]": ["X"]},
        "broken": {"own_broken": ["Z"], "own_shared": ["Z"]},
        "stale_pins": {"X": ["own_gone"]},
    }
    # the unfixed tree, the fully fixed one, then what the fixes changed on each fix alone
    changed = ("own_broken", "own_pin[1]", "own_shared")
    assert calls == [("src", ()), ("all", ()), ("X", changed), ("Z", changed)]
    rows = {x["id"]: x for x in r.fixes}
    assert rows["X"]["status"] == "fix verified"
    assert rows["Z"]["status"] == "breaks the harness's own tests"
    assert "`own_broken`" in rows["Z"]["detail"]
    text = render_markdown(r)
    assert "### The harness's own tests" in text
    assert "**2 broken**, 1 pinning the bug" in text
    assert "- broken: `own_broken`: fails with Z" in text
    assert "- pins the bug (named by X): `own_pin[1]`" in text
    assert 'named by X as pinning the bug, but passes with the fixes: "own_gone"' in text


def test_a_test_two_fixes_break_together_is_blamed_on_the_pair(tmp_path: Path) -> None:
    """A test that fails with no fix alone is rerun on each pair of fixes: the pair it
    fails with breaks it, and each of the two says so (openai-agents 0.24.0's restore
    tests fail with its window and cache fixes together, with neither alone)."""
    fix_w = Fix("W", (Form("*", (Edit("engine/a.py", "B = 1\n", "B = 2\n"),)),))
    unnamed = Fix("X", (Form("*", (Edit("engine/a.py", "A = 1\n", "A = 2\n"),)),))

    def run(tree: Path, only: Sequence[str]) -> OwnRun:
        text = (tree / "engine" / "a.py").read_text()
        failed = "A = 2" in text and "C = 2" in text
        return OwnRun([{"nodeid": "own_pair", "when": "call", "outcome": "failed" if failed
                        else "passed"}])  # fmt: skip

    r = audited(tmp_path, run, {"X": unnamed, "Z": FIX_Z, "W": fix_w})
    assert r.fixed["own_tests"]["broken"] == {"own_pair": ["X with Z"]}
    rows = {x["id"]: x["status"] for x in r.fixes}
    assert rows == {"X": "breaks the harness's own tests", "Z": "breaks the harness's own tests",
                    "W": "fix verified"}  # fmt: skip
    assert "- broken: `own_pair`: fails with X with Z" in render_markdown(r)


@pytest.mark.fault("own-tests-environment-fails")
def test_own_tests_that_did_not_run_could_not_check(tmp_path: Path) -> None:
    """An environment that does not build: no fix's status changes, and the report says
    why the check did not run (never that the fixes pass)."""
    r = audited(tmp_path, lambda tree, only: OwnRun([], "uv pip compile: unsatisfiable"))
    assert r.fixed["own_tests"] == {"could_not_check": "uv pip compile: unsatisfiable"}
    assert {x["status"] for x in r.fixes} == {"fix verified"}
    assert "**ctxaudit could not check them**: uv pip compile: unsatisfiable." in render_markdown(r)


def test_without_own_tests_the_report_says_nothing_of_them(tmp_path: Path) -> None:
    r = audited(tmp_path, None)
    assert "own_tests" not in r.fixed
    assert "own tests" not in render_markdown(r)


#: a target's own tests as its mutation.toml declares them (ctxaudit/own_tests.py): the
#: files that name its package, one test left out with its reason
OWN_TOML = """
[owntoy]
package = "toylib"
tests = []
[owntoy.peer]
name = "owntoy's own tests"
tests = ["tests/test_*.py"]
tests_matching = "toylib"
selection_reason = "the files that import it"
pytest_args = ["-p", "no:cacheprovider"]
[[owntoy.peer.deselect]]
test = "tests/test_own.py::test_left_out"
reason = "left out, to check that it is"
"""
OWN_TEST = """
from toylib import VALUE

def test_value():
    assert VALUE == 1

def test_left_out():
    assert False
"""


def test_the_runner_runs_the_declared_own_tests_on_the_tree_given(tmp_path: Path) -> None:
    """``own_tests_runner``: the declared files (not the others, not the deselected
    test) run in the target's peer process with the tree given first on the path; only
    the node ids asked for when given; a peer process that fails is could-not-check, in
    one line with no path of this machine."""
    import os
    import sys

    from ctxaudit import targets
    from ctxaudit.paths import REPO_ROOT
    from ctxaudit.suite_run import own_tests_runner
    from ctxaudit.targets.base import BaseTarget, Described, MutationScope, Resolved

    sdist = tmp_path / "sdist"
    (sdist / "tests").mkdir(parents=True)
    (sdist / "tests" / "test_own.py").write_text(OWN_TEST)
    (sdist / "tests" / "test_unrelated.py").write_text("def test_x():\n    assert False\n")
    (tmp_path / "mutation.toml").write_text(OWN_TOML)
    trees = {}
    for name, value in (("good", 1), ("broken", 2)):
        (tmp_path / name / "toylib").mkdir(parents=True)
        (tmp_path / name / "toylib" / "__init__.py").write_text(f"VALUE = {value}\n")
        trees[name] = tmp_path / name
    failing = []

    class OwnToy(BaseTarget):
        name = "owntoy"
        properties = {"T1": "toy"}
        mutation = MutationScope("owntoy", "toylib", peer=True, config=tmp_path / "mutation.toml")

        def resolve(self, spec: str | None = None, repo: Path | None = None) -> Resolved:
            return Resolved(self.name, "1.0", trees["good"], self.name)

        def peer_suite(self, resolved: Resolved) -> Path:
            return sdist

        def suite_process(self, target: Described, tmp: Path) -> tuple[str, dict[str, str]]:
            return self.peer_process(target, tmp)

        def peer_process(self, target: Described, tmp: Path) -> tuple[str, dict[str, str]]:
            if failing:
                raise RuntimeError(f"environment did not build (log: {tmp_path}/build.log)")
            path = os.pathsep.join([target.spec, str(REPO_ROOT)])
            return sys.executable, {**os.environ, "PYTHONPATH": path}

    targets.register(OwnToy())
    try:
        run = own_tests_runner(Described("owntoy", "owntoy", "1.0"))
        assert run is not None
        good = run(trees["good"], ())
        assert not good.error, good.error
        assert {t["nodeid"]: t["outcome"] for t in good.tests} == {
            "tests/test_own.py::test_value": "passed"
        }
        assert run(trees["broken"], ()).failed() == {"tests/test_own.py::test_value"}
        only = run(trees["good"], ["tests/test_own.py::test_value"])
        assert [t["nodeid"] for t in only.tests] == ["tests/test_own.py::test_value"]
        failing.append(True)
        error = run(trees["good"], ()).error
        assert error.startswith("RuntimeError: environment did not build")
        assert str(tmp_path) not in error
    finally:
        targets.unregister("owntoy")


def test_a_target_whose_suites_run_here_runs_its_own_tests_here_on_the_copy(
    tmp_path: Path,
) -> None:
    """gitreins (suites in this interpreter, no peer environment): its own tests run in
    this interpreter with the tree's copy first on the path, so the copy's code is the
    one they import; a target with an environment of its own that names none for its
    own tests is refused (could not check), never run here."""
    import subprocess

    from ctxaudit import targets
    from ctxaudit.suite_run import _here
    from ctxaudit.targets.base import Described

    copy = tmp_path / "copy"
    (copy / "engine").mkdir(parents=True)
    (copy / "engine" / "__init__.py").write_text("")
    (copy / "engine" / "eval_cap.py").write_text("WHERE = 'the copy'\n")
    python, env = _here(targets.get("gitreins"))(
        Described("gitreins", str(copy), "0.17.1", None), tmp_path
    )
    got = subprocess.run(
        [python, "-c", "import engine.eval_cap as m; print(m.WHERE)"],
        env=env, cwd=tmp_path, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert got.stdout.strip() == "the copy", got.stderr[-2000:]
    with pytest.raises(targets.TargetError, match="names none for its own tests"):
        _here(targets.get("langchain"))(
            Described("langchain", "langchain==1.5.2", "1.5.2", None), tmp_path
        )


def test_a_target_that_declares_no_own_tests_is_could_not_check_when_they_are_asked_for() -> None:
    """pydantic-ai's sdists ship no tests and its mutation.toml declares none: with
    --own-tests its report said nothing at all (the runner was None and the step
    returned), which reads as if they passed. Every run of its runner is an error that
    says why, so the report's section says could not check."""
    from ctxaudit.suite_run import own_tests_runner
    from ctxaudit.targets.base import Described

    run = own_tests_runner(Described("pydantic-ai", "pydantic-ai==2.68.0", "2.68.0", None))
    got = run(Path("/nonexistent"), ())
    assert got.tests == []
    assert got.error == (
        "pydantic-ai declares no own tests to run (no [pydantic-ai.peer] in its mutation.toml)"
    )
