"""Attribution on a real lightspeed-stack failure (``ctxaudit/fixaudit/``, step 3).

On main the known finding LS-HANGUP-TURN-LOST's region (a client that hangs up in the
middle of a stream) is kept in, every other affecting finding's region left out, as if
its region were too narrow: the lockstep fails, in that region, on the "hung up" opening
(a streamed /v1/responses). The fix audit replays the shrunk example on an unfixed copy
(the control, where it fails again) and on the copy with that finding's fix alone, where
it runs through: the failure is attributed to LS-HANGUP-TURN-LOST, and the command the
report prints under it (``bin/ctxaudit attribute --target lightspeed-stack@<commit>
--lightspeed-repo=REPO ...``) reruns the attribution with exit 0.

Only that finding's fix is given to the fix audit, and the "fully fixed" tree runs one
skipped test: what is checked here is attribution, not the fixed tree (the audit's). A
few minutes (the lockstep until its first failure, three short runs, the command), so
it is marked slow.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ctxaudit import replay, targets
from ctxaudit.fixaudit import FixAuditOptions, fix_audit
from ctxaudit.paths import REPO_ROOT
from ctxaudit.suite_run import run_pytest
from ctxaudit.target_report import TargetReport, judge
from ctxaudit.targets.base import Described, known_entry
from ctxaudit.targets.lightspeed import findings as lsfindings
from ctxaudit.targets.lightspeed.target import FINDINGS_TESTS, INENV

KEPT_IN = "LS-HANGUP-TURN-LOST"
#: a test that skips on main (not registered there): the "fully fixed" run, cheap
NOTHING = f"{FINDINGS_TESTS}::test_known_finding[LS-UNSTORED-STORED]"


@pytest.mark.lightspeed
@pytest.mark.slow
def test_a_failure_in_a_kept_region_is_attributed_to_its_fix(
    lightspeed_repo: Path, tmp_path: Path
) -> None:
    kind = targets.get("lightspeed-stack")
    (target,) = kind.expand("lightspeed-stack@main", lightspeed_repo)
    resolved = kind.resolve(target.spec, lightspeed_repo)
    tree = resolved.tree
    assert tree is not None
    on_main = {f.id for f in lsfindings.FINDINGS if f.registered_for(tree.tag, tree.commit)}
    known = [known_entry(f, registered=True, affects=f.id in on_main) for f in kind.findings()]
    left_out = [k["id"] for k in known if k["affects"] and k["id"] != KEPT_IN]
    env = kind.copy_env(resolved, left_out)
    seed = 1
    status, tests, output, _ = run_pytest(
        target,
        [f"{INENV}/test_lockstep.py"],
        "ci",
        seed,
        env,  # the lockstep: where it fails
    )
    report = TargetReport(
        target=kind.name, version=target.version, spec=target.spec, profile="ci", seed=seed,
        elapsed_s=0.0, exit_status=status, tests=tests, known=known,
    )  # fmt: skip
    judge(report, dict(kind.properties))
    assert report.findings, f"the kept-in region shows no failure:\n{output[-3000:]}"
    assert any("hang_up" in f.message for f in report.findings), report.findings

    def run(
        copy: str, paths: list[str], env: dict[str, str], replays: dict[str, list[str]]
    ) -> list[dict[str, Any]]:  # as ctxaudit.audit.run_fix_audit's
        env = {**env, **replay.environ(replays)}
        as_tree = Described(kind.name, copy, target.version, lightspeed_repo)
        return run_pytest(as_tree, paths, "ci", seed, env)[1]

    options = FixAuditOptions(
        list(kind.suites), dict(kind.properties), tmp_path / "out",
        fixes={KEPT_IN: targets.fixes()[KEPT_IN]}, version_name=kind.fix_version(resolved),
        leave_out=lambda ids: kind.copy_env(resolved, ids), fixed_suites=[NOTHING],
        left_out=left_out,
    )  # fmt: skip
    fix_audit(report, resolved.root, run, options)
    assert not report.findings, [(f.message, f.attribution) for f in report.findings]
    # the kept-in region fails in the lockstep and in the fixed programs that meet it:
    # each failure is attributed to the one fix
    assert report.attributed
    for each in report.attributed:
        assert each.owners == [KEPT_IN], each.attribution
    attributed = report.attributed[0]
    print(attributed.rerun)
    words = shlex.split(attributed.rerun.replace("=REPO", f"={lightspeed_repo}"))
    assert words[0] == f"CTXAUDIT_FINDINGS={','.join(left_out)}" and words[1] == "bin/ctxaudit"
    again = subprocess.run(
        [sys.executable, "-m", "ctxaudit", *words[2:]],
        cwd=REPO_ROOT, env={**os.environ, "CTXAUDIT_FINDINGS": ",".join(left_out)},
        capture_output=True, text=True, check=False, timeout=900,
    )  # fmt: skip
    print(again.stdout, again.stderr)
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"explained by the fix of {KEPT_IN}" in again.stdout
