"""``ctxaudit audit --target PATH --since REV``: the functions in scope
that changed since REV, and the mutants that selection runs."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from ctxaudit import cli
from ctxaudit.since import SinceError
from ctxaudit.targets.gitreins.tree import resolve
from mutation import _matches, engine
from mutation.config import target_config
from mutation.since import changed_functions


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(cwd), *args],
        check=True,
        capture_output=True,
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A gitreins source tree in a git repository (the pinned release's engine/, one
    commit), inside a subfolder so the package path differs from the repository's."""
    root = tmp_path / "repo" / "gitreins"
    shutil.copytree(resolve("").root / "engine", root / "engine",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    git(tmp_path / "repo", "init", "-q")
    git(tmp_path / "repo", "add", ".")
    git(tmp_path / "repo", "commit", "-q", "-m", "base")
    return root


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) >= 1, old
    path.write_text(text.replace(old, new, 1))


def test_changed_functions_since_rev(tree: Path) -> None:
    cap = tree / "engine" / "eval_cap.py"
    cfg = target_config("gitreins")
    assert changed_functions(tree, "HEAD", "engine", cfg.in_scope).functions == ()
    # a changed line in EvalCap.check (uncommitted: the working tree counts)
    edit(cap, "        return self._check_hard_caps()\n\n    def _check_hard_caps",
         "        found = self._check_hard_caps()\n        return found\n\n"
         "    def _check_hard_caps")  # fmt: skip
    # a deleted line only, in EvalCap.record_tool_call
    edit(cap, "        Same lenient check as record_llm_call — allows going slightly over.\n", "")
    # a change in a function out of the mutation scope (its mutation.toml leaves it out)
    edit(cap, '        """Return remaining time budget in seconds.\n', '        """\n')
    # outside every function: not a function change
    cap.write_text(cap.read_text() + "\n# a trailing comment\n")
    got = changed_functions(tree, "HEAD", "engine", cfg.in_scope)
    assert got.functions == (
        ("engine/eval_cap.py", "EvalCap.check"),
        ("engine/eval_cap.py", "EvalCap.record_tool_call"),
    )
    assert got.files == ("engine/eval_cap.py",)
    assert got.only_globs() == [
        "engine/eval_cap.py:EvalCap.check:*",
        "engine/eval_cap.py:EvalCap.record_tool_call:*",
    ]
    unscoped = changed_functions(tree, "HEAD", "engine").functions
    assert ("engine/eval_cap.py", "EvalCap.remaining_seconds") in unscoped
    # the selection: exactly the mutants of those functions (the plan of eval_cap.py
    # only, which holds them: planning evaluator.py too would only cost time; catalogued
    # mutants are matched in test_catalogued_mutants_follow_their_function)
    one_file = tuple(f for f in cfg.files if f[0] == "engine/eval_cap.py")
    (tree.parent / "none.toml").write_text("")
    plan = engine.build_plan("gitreins", replace(cfg, files=one_file), tree, "local",
                             catalogue_path=tree.parent / "none.toml")  # fmt: skip
    picked = {m.function for m in plan.mutants if any(_matches(m, g) for g in got.only_globs())}
    assert picked == {"EvalCap.check", "EvalCap.record_tool_call"}


def test_committed_change_and_out_of_scope(tree: Path) -> None:
    git(tree, "tag", "base")
    cap = tree / "engine" / "eval_cap.py"
    edit(cap, "        return self._check_hard_caps()\n\n    def _check_hard_caps",
         "        return self._check_hard_caps() or None\n\n    def _check_hard_caps")  # fmt: skip
    git(tree, "commit", "-q", "-am", "change check")
    assert changed_functions(tree, "base", "engine").functions == (
        ("engine/eval_cap.py", "EvalCap.check"),
    )
    assert changed_functions(tree, "base", "engine", lambda p, q: False).functions == ()
    with pytest.raises(SinceError, match="no-such-rev"):
        changed_functions(tree, "no-such-rev", "engine")


def test_catalogued_mutants_follow_their_function() -> None:
    m = engine.Mutant("catalogue:GR-1", "gitreins", "engine/eval_cap.py", "EvalCap.check",
                      "wrong-comparison", "catalogue", 1, 1, 1, 1, "a", "b",
                      catalogue="GR-1")  # fmt: skip
    assert _matches(m, "engine/eval_cap.py:EvalCap.check:*")
    assert not _matches(m, "engine/eval_cap.py:EvalCap.record_llm_call:*")


def test_since_needs_a_target_with_history(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["audit", "--target", "gitreins", "--since", "HEAD", "--no-mutation"])
    assert code == 2
    assert "--since needs targets with a git history" in capsys.readouterr().err


def test_a_changed_file_that_does_not_parse_is_one_line(tree: Path) -> None:
    cap = tree / "engine" / "eval_cap.py"
    edit(cap, "if elapsed >= self.max_seconds:", "if elapsed >= self.max_seconds  # oops:")
    with pytest.raises(SinceError, match=r"eval_cap\.py: does not parse \(Syntax Error"):
        changed_functions(tree, "HEAD", "engine", target_config("gitreins").in_scope)


def test_since_runs_from_any_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The mutation runner is asked from ctxaudit's root, not the caller's folder (issue
    #47: from outside the checkout, ``--since`` ended in "No module named 'mutation'")."""
    from ctxaudit import targets
    from ctxaudit.since import selection

    monkeypatch.chdir(tmp_path)
    ledger = targets.parse("ledger")
    changed = selection(ledger, "HEAD")
    assert set(changed) == {ledger[0].label}
