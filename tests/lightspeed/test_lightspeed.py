"""lightspeed-stack as a target: the in-environment suite, run on real trees.

Needs the repository (``--lightspeed-repo=PATH`` or ``CTXAUDIT_LIGHTSPEED_REPO``:
a clone, a git bundle or a working tree); without it these tests skip with one
line saying so. Each tree runs in its own Python 3.12 environment built from
its ``uv.lock`` (cached under ``.cache/lightspeed/envs/``), as a child pytest
on ``tests/lightspeed/inenv`` with this session's Hypothesis profile and seed.

- the lockstep and the known findings on the selected tree
  (``--lightspeed=SPEC``, default the repository's ``main``);
- the history of LCORE-3883: commit 41d55b98 stores a compacted /v1/query
  turn (S6 holds); release 0.6.0 does not, and the lockstep finds the missing
  turn by itself (judged by the failure's property and request, not by how far
  shrinking got, which is bounded in time).

A child run that ends without a failed test (its errors are could-not-check, or
it did not end in time) is could-not-check here too, never a finding.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import settings

from ctxaudit import failure_output
from ctxaudit.outcomes import CouldNotCheck
from ctxaudit.targets.lightspeed import runner
from ctxaudit.targets.lightspeed.findings import FINDINGS
from ctxaudit.targets.lightspeed.tree import (
    LightspeedTree,
    TargetError,
    from_path,
    resolve,
)
from tests import inenv_child
from tests.lightspeed import breaks

pytestmark = pytest.mark.lightspeed


def _tree(spec: str, repo: Path) -> LightspeedTree:
    try:
        return resolve(spec, repo)
    except TargetError as exc:
        raise pytest.UsageError(str(exc)) from None


def _run(
    tree: LightspeedTree,
    request: pytest.FixtureRequest,
    args: list[str],
    profile: str | None = None,
    **env: str,
) -> runner.ChildRun:
    seed = request.config.getoption("hypothesis_seed", default=None)
    profile = profile or settings._current_profile  # else the profile this session loaded
    stats = Path(os.environ.get("CTXAUDIT_FAILURE_STATS", ""))
    if stats.name:  # the child's phase times, in a file of its own (this session's is last)
        stats = stats.with_name(f"{stats.name}.{tree.commit or 'tree'}.child")
        stats.unlink(missing_ok=True)
        env = {**env, "CTXAUDIT_FAILURE_STATS": str(stats)}
    run = runner.run_suite(
        tree, args, profile=profile, seed=None if seed is None else str(seed), extra_env=env
    )
    if stats.name and stats.exists():
        failure_output.add_stats(json.loads(stats.read_text()))
        stats.unlink()
    print(f"{tree.label}: {run.seconds:.1f} s in its environment {run.env.lock_hash}")
    if run.passed:  # a failure's report is the assertion's message, printed once
        print(runner.summary(run.output))
    return run


def fail_child(title: str, run: runner.ChildRun) -> None:
    """The child's failure as this test's: a finding when one of its tests failed;
    could-not-check when it only errored (its could-not-check tests are errors), with
    the child's report as it is, without this test's traceback."""
    report = runner.summary(run.output)
    if not any(line.startswith("FAILED ") for line in run.output.splitlines()):
        raise CouldNotCheck(
            f"{title}: the child run checked nothing (exit {run.returncode}):\n{report}"
        )
    pytest.fail(f"{title}:\n{report}", pytrace=False)


def test_lockstep_and_findings(lightspeed_repo: Path, request: pytest.FixtureRequest) -> None:
    """S1-S3, S6, S9, C1 and the registered findings on the selected tree."""
    spec = request.config.getoption("--lightspeed") or "lightspeed-stack@main"
    tree = _tree(spec, lightspeed_repo)
    # a failing example's replay command is this test's, with --replay forwarded
    command = shlex.join(
        ["bin/ctxaudit", "test", request.node.nodeid,
         f"--lightspeed-repo={lightspeed_repo}", f"--lightspeed={spec}"]
    )  # fmt: skip
    # -x here stops the child at its first failure too (the lockstep runs first)
    args = [runner.INENV, *(["-x"] if request.config.option.maxfail == 1 else [])]
    blob = request.config.getoption("--replay", default="")
    if blob:
        args = [f"{runner.INENV}/test_lockstep.py", f"--replay={blob}"]
    env = {"CTXAUDIT_REPLAY_COMMAND": command}
    leave_out = working_tree_leave_out(tree)
    if leave_out is not None and "CTXAUDIT_LIGHTSPEED_LEAVE_OUT" not in os.environ:
        env["CTXAUDIT_LIGHTSPEED_LEAVE_OUT"] = leave_out
        print(f"{tree.label}: a working tree of {tree.commit}; left out: the regions of the "
              f"findings registered for that commit ({leave_out})")  # fmt: skip
    # main, as CI runs it: the lockstep's search under smoke (the fixed programs and the
    # findings run whole); a tree the developer names keeps the session's profile
    profile = inenv_child.search(request.config.getoption("--lightspeed"))
    run = _run(tree, request, args, profile=profile.get("CTXAUDIT_PROFILE"), **env)
    if not run.passed:
        fail_child(tree.label, run)


def working_tree_leave_out(tree: LightspeedTree) -> str | None:
    """For a working tree (a path) on a commit the registry names: the findings
    registered for that commit, as ``CTXAUDIT_LIGHTSPEED_LEAVE_OUT`` reads them.

    A working tree is a developer's change to a known tree, so it is checked with
    the regions that are known to fail on the tree it changes. A known finding that
    the change brings back, or one not registered for that tree, is then not left
    out: the lockstep fails on it, loudly, instead of leaving its region out because
    its program reproduces (what the session does for any other tree, by running
    the programs first). The regression tests of the findings still run the programs
    and say which reproduce. ``None`` (the programs decide, as before) for a tree
    that is not a working tree, or whose commit the registry does not name.
    """
    if tree.origin != "path" or not tree.commit:
        return None
    known = {name for finding in FINDINGS for name in finding.registered}
    if not any(tree.commit.startswith(name) for name in known):
        return None
    ids = [f.id for f in FINDINGS if f.registered_for(None, tree.commit)]
    return ",".join(ids) or "none"


@pytest.mark.parametrize(
    ("spec", "expect"),
    [("lightspeed-stack@41d55b98", "holds"), ("lightspeed-stack==0.6.0", "fails")],
    ids=["41d55b98-stores", "0.6.0-loses"],
)
def test_history_of_compacted_query(
    spec: str, expect: str, lightspeed_repo: Path, request: pytest.FixtureRequest
) -> None:
    """LCORE-3883: S6 for a compacted /v1/query, before and after the refactors."""
    tree = _tree(spec, lightspeed_repo)
    args = [f"{runner.INENV}/test_history.py", "-s"]
    run = _run(tree, request, args, CTXAUDIT_LIGHTSPEED_HISTORY=expect)
    if not run.passed:
        fail_child(f"{tree.label} ({expect})", run)
    # both tests ran where the tree loses the turn; where it stores it, the lockstep's
    # search for the loss is skipped. pytest's summary line, wherever the tree's log
    # lines (on stderr) put it in the output
    summary = [ln for ln in run.output.splitlines() if re.match(r"\d+ (passed|failed)", ln)]
    want = "2 passed in " if expect == "fails" else "1 passed, 1 skipped in "
    assert summary and summary[-1].startswith(want), (want, summary)


def test_hand_made_breaks_are_caught(
    lightspeed_repo: Path, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Each break of main (tests/lightspeed/breaks.py) fails the lockstep with its property.

    Mutation profile (derandomized, no shrinking); two breaks run at a time,
    each in its own child process.
    """
    spec = request.config.getoption("--lightspeed") or "lightspeed-stack@main"
    base = _tree(spec, lightspeed_repo)
    # the regions left out on the tree the copies come from, fixed for every copy
    registered = [f.id for f in FINDINGS if f.registered_for(base.tag, base.commit)]
    leave_out = ",".join(registered) or "none"

    def check(brk: breaks.Break) -> str | None:
        copy = breaks.apply(base.root, tmp_path / brk.name, brk)
        broken = from_path(copy, spec=f"{spec} + {brk.name}")
        run = runner.run_suite(
            broken,
            [f"{runner.INENV}/test_lockstep.py", "-x"],
            profile="mutation",
            extra_env={"CTXAUDIT_LIGHTSPEED_LEAVE_OUT": leave_out},
        )
        print(f"{brk.name:<24} {run.seconds:5.1f} s  {'caught' if not run.passed else 'MISSED'}")
        if run.passed:
            return f"{brk.name} ({brk.what}): not caught"
        if not re.search(rf"\b{brk.prop}[:/]", run.output):
            return f"{brk.name}: failed, but not on {brk.prop}:\n{runner.summary(run.output)}"
        return None

    with ThreadPoolExecutor(max_workers=2) as pool:
        problems = [p for p in pool.map(check, breaks.BREAKS) if p]
    assert not problems, "\n".join(problems)
