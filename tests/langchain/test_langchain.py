"""langchain in ctxaudit's own interpreter: trees, environments, fixes, and the
in-environment suite (``tests/langchain/inenv``) run as a child in each release's
environment.

``--langchain=SPEC`` names one release or tree; without it the audited releases run
(the current one and two earlier: :data:`RELEASES`). On the audited releases the lockstep
runs under ``smoke`` (a sixth of the gate's examples): there it must still drive each
release's API and hold; each release's search is its release audit's
(``tests/inenv_child.search``). A release or tree named with the option gets the
session's profile (``ci``). Every release's findings and fixes are checked by their
programs.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ctxaudit.fixes import fixed_copy, load_fixes
from ctxaudit.targets import get
from ctxaudit.targets.base import TargetError, never
from ctxaudit.targets.langchain import findings
from ctxaudit.targets.langchain import tree as lc
from tests import inenv_child

RELEASES = ("1.5.2", "1.3.14", "1.2.0")


def releases(request: pytest.FixtureRequest) -> list[str]:
    spec = request.config.getoption("--langchain")
    return [spec] if spec else [f"langchain=={v}" for v in RELEASES]


def child(spec: str, args: list[str], **extra: str) -> subprocess.CompletedProcess[str]:
    return inenv_child.child("langchain", spec, args, **extra)


def test_lockstep_and_findings(request: pytest.FixtureRequest) -> None:
    """C1, S6, S7 and the registered findings, on each selected release."""
    failed = []
    for spec in releases(request):
        run = child(
            spec,
            ["tests/langchain/inenv"],
            **inenv_child.search(request.config.getoption("--langchain")),
        )
        if run.returncode != 0:
            failed.append(f"{spec} (exit {run.returncode}):\n{run.stdout[-6000:]}{run.stderr}")
    assert not failed, "\n\n".join(failed)


@pytest.mark.parametrize("version", RELEASES)
def test_lockstep_fails_without_the_findings_left_out(version: str) -> None:
    """The lockstep can fail: on a release where findings are registered, it fails
    when none is left out (each registered region is one it reaches)."""
    registered = [
        f.id for f in findings.FINDINGS if version in f.versions and f.in_region is not never
    ]
    run = child(
        f"langchain=={version}",
        # the gate's examples, no shrinking: only whether it fails is asked here
        ["tests/langchain/inenv/test_lockstep.py", "--hypothesis-profile=mutation"],
        CTXAUDIT_FINDINGS="none",
    )
    assert bool(registered) == (run.returncode == 1), run.stdout[-3000:]


def test_each_fix_verified_and_the_fully_fixed_lockstep_holds(tmp_path: Path) -> None:
    """On each release, each registered finding's program stops reproducing with its
    fix, and the lockstep holds on the fully fixed tree with nothing left out."""
    fixes = load_fixes("ctxaudit.targets.langchain.fixes")
    for version in RELEASES:
        root = lc.resolve(version).root
        ids = [f.id for f in findings.FINDINGS if version in f.versions]
        dest = tmp_path / version
        applied = fixed_copy(root, dest, version, [fixes[i] for i in ids])
        assert sorted(applied.applied) == sorted(ids), applied.failed
        # each regression test no longer reproduces its finding (one child for them all)
        tests = [
            f"{findings.FINDINGS_TESTS}::{findings.BY_ID[i].repro.split('::')[1]}" for i in ids
        ]
        if tests:
            run = child(
                str(dest), ["--maxfail=100", "-rf", *tests], CTXAUDIT_FINDINGS=",".join(ids)
            )
            failed = [t for t in tests if f"FAILED {t}" in run.stdout]
            assert failed == tests and run.stdout.count(": fixed?") >= len(tests), (
                version,
                run.stdout[-3000:],
            )
        lockstep = child(
            str(dest),
            ["tests/langchain/inenv/test_lockstep.py"],
            CTXAUDIT_FINDINGS="none",
            **inenv_child.search(None),
        )
        assert lockstep.returncode == 0, lockstep.stdout[-3000:]
        shutil.rmtree(dest)


def test_specs_and_errors(tmp_path: Path) -> None:
    target = get("langchain")
    assert target.claims("langchain==1.3.14") and not target.claims("gitreins")
    assert target.resolve("1.3.14").version == "1.3.14"
    with pytest.raises(TargetError, match="not a langchain v1 tree"):
        lc.from_path(tmp_path)
    with pytest.raises(TargetError, match="is not a version number"):
        lc.resolve("langchain==one")
    with pytest.raises(TargetError, match="expected langchain"):
        target.expand("langchain>=1.2")
