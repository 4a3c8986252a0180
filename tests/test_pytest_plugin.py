"""The maintainers' pytest plugin (ctxaudit/pytest_ctxaudit.py), from a harness's own
project: ``pytest --ctxaudit=SPEC`` adds a test per property, a broken tree fails naming
the property, a baseline the project owns passes while only its entries reproduce and
fails naming an entry that no longer does, and a run that does not ask is unchanged.

Each run is a real ``pytest`` process in a temporary project, as a maintainer runs it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OWN_TEST = "def test_own():\n    assert True\n"

pytestmark = pytest.mark.gitreins


def _project(tmp_path: Path, pyproject: str = "") -> Path:
    project = tmp_path / "harness"
    (project / "tests").mkdir(parents=True)
    (project / "tests" / "test_own.py").write_text(OWN_TEST)
    (project / "pyproject.toml").write_text(pyproject)
    return project


def _pytest(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-rA", "-p", "no:randomly", *args],
        cwd=project, capture_output=True, text=True, check=False,
    )  # fmt: skip


def _broken_gitreins(dest: Path, name: str) -> Path:
    """A copy of the pinned gitreins with one break of tests/gitreins/broken_copies.py."""
    proc = subprocess.run(
        [sys.executable, "-m", "tests.broken_target", "gitreins", name, str(dest)],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    (option,) = json.loads(proc.stdout.strip().splitlines()[-1])["options"]
    return Path(option.partition("=")[2])


def test_a_run_that_does_not_ask_is_unchanged(tmp_path: Path) -> None:
    proc = _pytest(_project(tmp_path))
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert "1 passed" in proc.stdout and "ctxaudit/" not in proc.stdout


def test_a_broken_tree_fails_naming_the_property(tmp_path: Path) -> None:
    tree = _broken_gitreins(tmp_path / "tree", "b2-input-cap-strict")
    proc = _pytest(_project(tmp_path), f"--ctxaudit={tree}")
    assert proc.returncode == 1, proc.stdout[-3000:]
    out = proc.stdout
    assert "PASSED tests/test_own.py::test_own" in out
    assert "FAILED ctxaudit/gitreins-0.17.1::B2" in out, out[-3000:]
    assert "PASSED ctxaudit/gitreins-0.17.1::B1" in out
    assert "gitreins-0.17.1 breaks B2:" in out and "new finding: B2" in out


def test_the_projects_baseline_owns_the_gate(tmp_path: Path) -> None:
    """``[tool.ctxaudit]`` names the target and the baseline: with every reproducing
    known finding accepted the run passes; without one entry it fails naming the
    finding; an entry that no longer reproduces fails naming the entry."""
    project = _project(
        tmp_path,
        '[tool.ctxaudit]\ntarget = "gitreins==0.17.1"\nbaseline = "ctxaudit-baseline.toml"\n',
    )
    baseline = project / "ctxaudit-baseline.toml"
    made = subprocess.run(
        [sys.executable, "-m", "ctxaudit", "baseline", "--target", "gitreins==0.17.1",
         "--out", str(baseline)],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr[-2000:]
    text = baseline.read_text()
    assert 'id = "GR-V8-THRESHOLD-UNVALIDATED"' in text

    passed = _pytest(project)
    assert passed.returncode == 0, passed.stdout[-3000:]
    assert "PASSED ctxaudit/gitreins-0.17.1::V8" in passed.stdout
    assert "PASSED ctxaudit/baseline::GR-V8-THRESHOLD-UNVALIDATED" in passed.stdout

    entries = text.split("\n[[accepted]]\n")
    kept = [e for e in entries if 'id = "GR-V8-THRESHOLD-UNVALIDATED"' not in e]
    baseline.write_text("\n[[accepted]]\n".join(kept))
    failed = _pytest(project)
    assert failed.returncode == 1
    assert "FAILED ctxaudit/gitreins-0.17.1::V8" in failed.stdout
    assert "known finding GR-V8-THRESHOLD-UNVALIDATED" in failed.stdout

    baseline.write_text(
        text + '\n[[accepted]]\nid = "GR-GAP-062"\ntarget = "gitreins"\nproperty = "V7"\n'
        'why = "fixed in 0.15.0"\n'
    )
    stale = _pytest(project)
    assert stale.returncode == 1
    assert "FAILED ctxaudit/baseline::GR-GAP-062" in stale.stdout
    assert "baseline entry GR-GAP-062 no longer reproduces" in stale.stdout
