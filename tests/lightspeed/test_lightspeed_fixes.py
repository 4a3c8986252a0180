"""The fix audit on lightspeed-stack: fixes verified the way ``bin/ctxaudit audit`` does.

Each lightspeed-stack finding's fix (``ctxaudit/targets/lightspeed/fixes/``) is applied to a copy of
a tree; the copy runs in the tree's environment as that tree (the target's
``copy_env``: its tag and commit, so the findings registered for it are checked, and
exactly the given regions left out). A fix is verified when its finding's regression
test (``tests/lightspeed/inenv/test_findings.py``) passes on the unfixed copy (the
finding reproduces) and fails with an AssertionError on the fixed one (it no longer
does). Here: two cheap fixes on main (two runs, each running those two findings'
programs only: a program runs when its finding's test looks it up). The whole fix
audit, every finding on every version, is the audit's:
``bin/ctxaudit audit --target lightspeed-stack@main --lightspeed-repo=PATH``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxaudit import fixes as fixlib
from ctxaudit import targets
from ctxaudit.suite_run import run_pytest
from ctxaudit.targets.base import Described
from ctxaudit.targets.lightspeed import findings as lsfindings
from ctxaudit.targets.lightspeed.fixes import trees as ls_trees
from ctxaudit.targets.lightspeed.target import FINDINGS_TESTS

#: cheap: each shows on a short program, and its fix is a few lines
CHEAP = ("LS-HANGUP-TURN-LOST", "LS-UNSTORED-NOT-COMPACTED")


def test_every_lightspeed_finding_has_a_fix_or_a_reason() -> None:
    """Every finding has a fix module; each form names trees the registry names."""
    fixes = targets.fixes()
    assert ls_trees.MAIN == lsfindings.MAIN
    assert ls_trees.RELEASE_06 == lsfindings.RELEASE_06
    assert ls_trees.RELEASE_07 == lsfindings.RELEASE_07
    for finding in lsfindings.FINDINGS:
        fix = fixes.get(finding.id)
        assert fix is not None, f"{finding.id}: no fix in ctxaudit/targets/lightspeed/fixes"
        for name in finding.registered:
            form = fix.form_for(name)
            assert form is not None, f"{finding.id}: no form (fix or reason) for {name}"
            assert bool(form.reason) != bool(form.edits or form.patch), (finding.id, name)


@pytest.mark.lightspeed
def test_cheap_fixes_verify_on_main(lightspeed_repo: Path, tmp_path: Path) -> None:
    kind = targets.get("lightspeed-stack")
    (target,) = kind.expand("lightspeed-stack@main", lightspeed_repo)
    resolved = kind.resolve(target.spec, lightspeed_repo)
    version = kind.fix_version(resolved)
    fixes = [targets.fixes()[fid] for fid in CHEAP]
    nodeids = [f"{FINDINGS_TESTS}::test_known_finding[{fid}]" for fid in CHEAP]
    env = kind.copy_env(resolved, list(CHEAP))

    def run(copy: Path) -> dict[str, dict[str, object]]:
        as_main = Described(kind.name, str(copy), target.version, lightspeed_repo)
        tests = run_pytest(as_main, nodeids, "ci", None, env)[1]
        return {str(t["nodeid"]): t for t in tests if t["when"] == "call"}

    unfixed = fixlib.fixed_copy(resolved.root, tmp_path / "unfixed", version, [])
    fixed = fixlib.fixed_copy(resolved.root, tmp_path / "fixed", version, fixes)
    assert fixed.applied == list(CHEAP), fixed.failed
    assert fixlib.diff_trees(resolved.root, fixed.root)
    without, with_fixes = run(unfixed.root), run(fixed.root)
    for fid, nodeid in zip(CHEAP, nodeids, strict=True):
        assert without[nodeid]["outcome"] == "passed", f"{fid} does not reproduce unfixed"
        got = with_fixes[nodeid]
        assert got["outcome"] == "failed", f"{fid} still reproduces with its fix"
        assert "no longer reproduces" in str(got.get("longrepr", "")), got.get("longrepr")
