"""openai-agents in ctxaudit's own interpreter: trees, environments, fixes, and the
in-environment suite (``tests/openai_agents/inenv``) run as a child in each release's
environment.

``--openai-agents=SPEC`` names one release or tree; without it the audited releases run
(the current one and three earlier: :data:`RELEASES`). The lockstep runs in the
release's environment, some 15 s a release; to keep this file near a minute and a half,
the whole lockstep and the fully fixed lockstep run on one release each, and the
lockstep that must fail with no region left out runs without shrinking. Every release's
registered findings are still checked, each by its program, and each fix by its
program on every release it is registered for.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from ctxaudit.fixes import fixed_copy, load_fixes
from ctxaudit.paths import REPO_ROOT
from ctxaudit.targets import get
from ctxaudit.targets.base import TargetError
from ctxaudit.targets.openai_agents import findings
from ctxaudit.targets.openai_agents import tree as oa

RELEASES = ("0.24.0", "0.23.1", "0.22.3", "0.7.0")
LOCKSTEP = "tests/openai_agents/inenv/test_lockstep.py"


def releases(request: pytest.FixtureRequest) -> list[str]:
    spec = request.config.getoption("--openai-agents")
    return [spec] if spec else [f"openai-agents=={v}" for v in RELEASES]


def child(spec: str, args: list[str], **extra: str) -> subprocess.CompletedProcess[str]:
    """pytest on ``args`` in the release's environment, as the audit runs it."""
    target = get("openai-agents")
    described = target.expand(spec)[0]
    python, env = target.suite_process(described, Path(tempfile.gettempdir()))
    env.update(extra)
    cmd = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", *args]
    return subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=False)


def test_lockstep_and_findings(request: pytest.FixtureRequest) -> None:
    """The lockstep on the current release (or the one selected) and every release's
    registered findings, each reproducing by its program."""
    failed = []
    for k, spec in enumerate(releases(request)):
        args = ["tests/openai_agents/inenv"] if k == 0 else [findings.FINDINGS_TESTS]
        run = child(spec, args)
        if run.returncode != 0:
            failed.append(f"{spec} (exit {run.returncode}):\n{run.stdout[-6000:]}{run.stderr}")
    assert not failed, "\n\n".join(failed)


@pytest.mark.parametrize("version", RELEASES)
def test_lockstep_fails_without_the_findings_left_out(version: str) -> None:
    """The lockstep can fail: on every audited release some finding whose region its
    steps reach is registered (OA-COMPACTION-FAILURE-FAILS-RUN on all), and it fails
    when none is left out."""
    run = child(
        f"openai-agents=={version}",
        [LOCKSTEP, "--hypothesis-profile=mutation"],  # the gate's examples, no shrinking
        CTXAUDIT_FINDINGS="none",
    )
    assert run.returncode == 1 and "AssertionError" in run.stdout, run.stdout[-3000:]


def test_each_fix_verified_and_the_fully_fixed_lockstep_holds(tmp_path: Path) -> None:
    """On each release, each registered finding's program stops reproducing with its
    fix; the lockstep holds on the fully fixed 0.22.3 with nothing left out."""
    fixes = load_fixes("ctxaudit.targets.openai_agents.fixes")
    for version in RELEASES:
        root = oa.resolve(version).root
        ids = [f.id for f in findings.FINDINGS if version in f.versions]
        dest = tmp_path / version
        applied = fixed_copy(root, dest, version, [fixes[i] for i in ids])
        assert sorted(applied.applied) == sorted(ids), applied.failed
        tests = [
            f"{findings.FINDINGS_TESTS}::{findings.BY_ID[i].repro.split('::')[1]}" for i in ids
        ]
        # with every fixed finding assumed, each regression test now fails (-x off)
        run = child(str(dest), ["--maxfail=100", "-rf", *tests], CTXAUDIT_FINDINGS=",".join(ids))
        failed = [t for t in tests if f"FAILED {t}" in run.stdout]
        assert failed == tests and run.stdout.count(": fixed?") >= len(tests), (
            version,
            run.stdout[-3000:],
        )
        if version == "0.22.3":
            lockstep = child(str(dest), [LOCKSTEP], CTXAUDIT_FINDINGS="none")
            assert lockstep.returncode == 0, lockstep.stdout[-3000:]
        shutil.rmtree(dest)


def test_specs_and_errors(tmp_path: Path) -> None:
    target = get("openai-agents")
    assert target.claims("openai-agents==0.23.1") and not target.claims("gitreins")
    assert target.resolve("0.23.1").version == "0.23.1"
    assert target.resolve("").version == oa.PINNED
    with pytest.raises(TargetError, match="not an openai-agents tree"):
        oa.from_path(tmp_path)
    with pytest.raises(TargetError, match="is not a version number"):
        oa.resolve("openai-agents==one")
    with pytest.raises(TargetError, match="expected openai-agents"):
        target.expand("openai-agents>=0.22")
