"""pydantic-ai in ctxaudit's own interpreter: trees, environments, fixes, and the
in-environment suite (``tests/pydantic_ai/inenv``) run as a child in each release's
environment.

``--pydantic-ai=SPEC`` names one release or tree; without it the audited releases run
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
from ctxaudit.targets.base import TargetError
from ctxaudit.targets.pydantic_ai import findings
from ctxaudit.targets.pydantic_ai.tree import LIBRARY
from tests import inenv_child

RELEASES = ("2.68.0", "2.40.0", "2.21.0")
LOCKSTEP = "tests/pydantic_ai/inenv/test_lockstep.py"


def child(spec: str, args: list[str], **extra: str) -> subprocess.CompletedProcess[str]:
    return inenv_child.child("pydantic-ai", spec, args, **extra)


def test_lockstep_and_findings(request: pytest.FixtureRequest) -> None:
    """B1, B2, B3 and the registered findings, on each selected release."""
    spec = request.config.getoption("--pydantic-ai")
    failed = []
    for one in [spec] if spec else [f"pydantic-ai=={v}" for v in RELEASES]:
        run = child(one, ["tests/pydantic_ai/inenv"], **inenv_child.search(spec))
        if run.returncode != 0:
            failed.append(f"{one} (exit {run.returncode}):\n{run.stdout[-6000:]}{run.stderr}")
    assert not failed, "\n\n".join(failed)


@pytest.mark.parametrize("finding", [f.id for f in findings.FINDINGS])
def test_the_lockstep_reaches_each_finding(finding: str, tmp_path: Path) -> None:
    """The lockstep can fail on each finding: on the newest release it is registered
    for, with every other finding there fixed and nothing left out, it fails. (Regions
    can nest, so leaving the others out instead could hide this one.)"""
    version = max(findings.BY_ID[finding].versions, key=lambda v: tuple(map(int, v.split("."))))
    fixes = load_fixes("ctxaudit.targets.pydantic_ai.fixes")
    others = [fixes[f.id] for f in findings.FINDINGS if version in f.versions and f.id != finding]
    applied = fixed_copy(LIBRARY.resolve(version).root, tmp_path / version, version, others)
    assert not applied.failed, applied.failed
    # the gate's examples, no shrinking: only whether it fails is asked here
    run = child(
        str(applied.root), [LOCKSTEP, "--hypothesis-profile=mutation"], CTXAUDIT_FINDINGS="none"
    )
    assert run.returncode == 1 and "AssertionError" in run.stdout, run.stdout[-3000:]


def test_each_fix_verified_and_the_fully_fixed_lockstep_holds(tmp_path: Path) -> None:
    """On each release, each registered finding's program stops reproducing with its
    fix, and the lockstep holds on the fully fixed tree with nothing left out."""
    fixes = load_fixes("ctxaudit.targets.pydantic_ai.fixes")
    for version in RELEASES:
        root = LIBRARY.resolve(version).root
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
            str(dest), [LOCKSTEP], CTXAUDIT_FINDINGS="none", **inenv_child.search(None)
        )
        assert lockstep.returncode == 0, lockstep.stdout[-3000:]
        shutil.rmtree(dest)


def test_specs_and_errors(tmp_path: Path) -> None:
    target = get("pydantic-ai")
    assert target.claims("pydantic-ai==2.40.0") and not target.claims("langchain")
    assert target.resolve("2.40.0").version == "2.40.0"
    with pytest.raises(TargetError, match="not a pydantic-ai tree"):
        LIBRARY.from_path(tmp_path)
    with pytest.raises(TargetError, match="is not a version number"):
        LIBRARY.resolve("pydantic-ai==one")
    with pytest.raises(TargetError, match="expected pydantic-ai"):
        target.expand("pydantic-ai>=2.40")
