"""openai-agents in ctxaudit's own interpreter: trees, environments, fixes, and the
in-environment suite (``tests/openai_agents/inenv``) run as a child in each release's
environment.

``--openai-agents=SPEC`` names one release or tree; without it the audited releases run
(the current one and three earlier: :data:`RELEASES`). The lockstep runs in the
release's environment, some 15 s a release at ``ci``; to keep this file near a minute and
a half, the whole lockstep runs on one release (under ``smoke`` unless a release is named:
``tests/inenv_child.search``; the search is the release audit's), the fully fixed
lockstep on the releases between the audited ones whose fix forms no audit verifies
(the audit verifies the audited releases' fully fixed trees), and the lockstep that
must fail with no region left out runs without shrinking. Every release's registered
findings are still checked, each by its program, and each fix by its program on every
release it is registered for.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ctxaudit.fixes import fixed_copy, load_fixes
from ctxaudit.paths import REPO_ROOT
from ctxaudit.targets import get
from ctxaudit.targets.base import TargetError
from ctxaudit.targets.openai_agents import findings
from ctxaudit.targets.openai_agents import tree as oa
from ctxaudit.targets.pypi import Tree
from tests import inenv_child

RELEASES = ("0.24.0", "0.23.1", "0.22.3", "0.7.0")
LOCKSTEP = "tests/openai_agents/inenv/test_lockstep.py"
#: releases between the audited ones where the fixes take forms no audit verifies, each
#: with the audited release whose environment runs it (its requirements are a subset of
#: that one's: 0.22.3 only adds httpx2, pyjwt, python-multipart, starlette and urllib3)
BETWEEN = {"0.22.0": "0.22.3"}


def releases(request: pytest.FixtureRequest) -> list[str]:
    spec = request.config.getoption("--openai-agents")
    return [spec] if spec else [f"openai-agents=={v}" for v in RELEASES]


def child(spec: str, args: list[str], **extra: str) -> subprocess.CompletedProcess[str]:
    """pytest on ``args`` in the release's environment, as the audit runs it."""
    return inenv_child.child("openai-agents", spec, args, **extra)


def test_lockstep_and_findings(request: pytest.FixtureRequest) -> None:
    """The lockstep on the current release (or the one selected) and every release's
    registered findings, each reproducing by its program."""
    failed = []
    for k, spec in enumerate(releases(request)):
        args = ["tests/openai_agents/inenv"] if k == 0 else [findings.FINDINGS_TESTS]
        run = child(spec, args, **inenv_child.search(request.config.getoption("--openai-agents")))
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


def test_each_fix_verified(tmp_path: Path) -> None:
    """On each release, each registered finding's program stops reproducing with its
    fix (a finding with no fix there is left out). The fully fixed lockstep runs in the
    audit on every audited release, and below on the releases between them."""
    fixes = load_fixes("ctxaudit.targets.openai_agents.fixes")
    for version in RELEASES:
        root = oa.resolve(version).root
        ids = [f.id for f in findings.FINDINGS if version in f.versions]
        ids = [i for i in ids if not no_fix(i, version)]
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
        shutil.rmtree(dest)


def fixed_everywhere(root: Path, dest: Path, version: str) -> list[str]:
    """Every fix applied to a copy of the tree at ``dest``, each in the form its text
    takes, registered for the release or not: the fixes that applied."""
    fixes = load_fixes("ctxaudit.targets.openai_agents.fixes")
    return sorted(fixed_copy(root, dest, version, list(fixes.values())).applied)


def test_the_fixes_that_apply_to_an_audited_release_are_its_findings(tmp_path: Path) -> None:
    """On each audited release, the fixes with a form that applies are exactly those of
    its registered findings, so the audit's fully fixed tree (every reproducing finding's
    fix) is every form chosen there, and the audit verifies them together."""
    for version in RELEASES:
        applied = fixed_everywhere(oa.resolve(version).root, tmp_path / version, version)
        registered = sorted(f.id for f in findings.FINDINGS if version in f.versions)
        unfixable = [i for i in registered if i not in applied and no_fix(i, version)]
        assert applied == sorted(set(registered) - set(unfixable)), version


def no_fix(finding_id: str, version: str) -> bool:
    """The finding's fix has, for ``version``, a form with a reason (no fix there)."""
    fix = load_fixes("ctxaudit.targets.openai_agents.fixes")[finding_id]
    form = fix.form_for(version)
    return form is not None and bool(form.reason)


@pytest.mark.parametrize("version", sorted(BETWEEN))
def test_between_audited_releases_the_fully_fixed_lockstep_holds(
    tmp_path: Path, version: str
) -> None:
    """A release no audit covers: every fix applied in the form its text takes, the
    lockstep holds with no region left out (only a finding with no fix there)."""
    dest = tmp_path / version
    applied = fixed_everywhere(oa.resolve(version).root, dest, version)
    assert applied, f"no fix applies to openai-agents {version}"
    unfixable = [f.id for f in findings.FINDINGS if no_fix(f.id, version)]
    built = oa.ensure_env(oa.resolve(BETWEEN[version]))  # the tree comes first on the path
    env = oa.child_environ(built, Tree(oa.NAME, version, dest, "path"))
    env.update(TMPDIR=str(tmp_path), CTXAUDIT_FINDINGS=",".join(unfixable) or "none")
    env.update(inenv_child.search(None))
    cmd = [str(built.python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", LOCKSTEP]
    run = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=False)
    assert run.returncode == 0 and " passed" in run.stdout, (applied, run.stdout[-3000:])


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
