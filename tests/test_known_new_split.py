"""What is known and what is new does not depend on whether the fixes are verified.

A toy target with a fix audit: one known finding, TOY-BUG (its tree's ``engine.py``
says ``BUG = True``), whose region the suite leaves out, and one test outside that
region that the same bug breaks. The fix audit attributes that failure to TOY-BUG; so
must ``--no-fixes`` (the README's pre-commit hook), or a baseline written by ``ctxaudit
baseline`` passes ``audit --baseline`` and fails the same audit with ``--no-fixes``.
Each pytest run is a real process on a few lines of test: seconds in all.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from ctxaudit import baseline, cli, result_cache, suite_run, targets
from ctxaudit.fixes import Edit, Fix, Form
from ctxaudit.targets.base import (
    BaseTarget,
    Described,
    FindingsCheck,
    KnownFinding,
    Resolved,
    known_entry,
)

ROOT = Path(__file__).resolve().parents[1]
KNOWN = KnownFinding(
    "TOY-BUG", "T1", "the toy's bug", "the region", "test_known.py::test_known_reproduces"
)
FIX = Fix("TOY-BUG", (Form("*", (Edit("engine.py", "BUG = True\n", "BUG = False\n"),)),))

#: the suite: test_region is the known finding's region (left out while it is known);
#: test_outside is the same bug met outside it, which only the fix audit's attribution
#: tells from a new finding
SUITE = """
import os, pathlib
import pytest

BUG = "BUG = True" in (pathlib.Path(os.environ["TOY_TREE"]) / "engine.py").read_text()
LEFT_OUT = "TOY-BUG" in os.environ.get("CTXAUDIT_FINDINGS", "").split(",")

@pytest.mark.properties("T1")
def test_region():
    if LEFT_OUT:
        pytest.skip("TOY-BUG's region")
    assert not BUG, "T1: the toy's bug, in its region"

@pytest.mark.properties("T1")
def test_outside():
    assert not BUG, "T1: the toy's bug, outside its region"

@pytest.mark.properties("T2")
def test_t2():
    assert True
"""

KNOWN_TEST = """
import os, pathlib

def test_known_reproduces():
    tree = pathlib.Path(os.environ["TOY_TREE"])
    assert "BUG = True" in (tree / "engine.py").read_text(), "does not reproduce"
"""


class FixableToy(BaseTarget):
    """A toy target whose versions are one tree, with a fix audit."""

    name = "fixtoy"
    properties = {"T1": "toy holds", "T2": "toy holds too"}
    spec_forms = "'fixtoy'"
    excludes_known = True
    fix_audit = True

    def __init__(self, home: Path) -> None:
        self.home = home
        self.suites = (str(home / "test_toy.py"),)

    def claims(self, spec: str) -> bool:
        return spec.startswith("fixtoy")

    def expand(self, spec: str, repo: Path | None = None) -> list[Described]:
        return [Described(self.name, spec, "1.0")]

    def resolve(self, spec: str | None = None, repo: Path | None = None) -> Resolved:
        return Resolved(self.name, "1.0", self.home / "tree", "fixtoy", copy_dir="fixtoy")

    def suite_process(self, target: Described, tmp: Path) -> tuple[str, dict[str, str]]:
        tree = target.spec if Path(target.spec).is_dir() else str(self.home / "tree")
        path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
        return sys.executable, {**os.environ, "TOY_TREE": tree, "PYTHONPATH": path}

    def findings(self) -> list[KnownFinding]:
        return [KNOWN]

    def findings_check(self, target: Described, tmp: Path) -> FindingsCheck:
        def read(outcome: Mapping[str, str]) -> list[dict[str, Any]]:
            passed = any(v == "passed" for k, v in outcome.items() if "test_known" in k)
            return [known_entry(KNOWN, registered=True, affects=passed)]

        return FindingsCheck([str(self.home / "test_known.py")], {}, read)


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "toy"
    (home / "tree").mkdir(parents=True)
    (home / "tree" / "engine.py").write_text("BUG = True\n")
    (home / "test_toy.py").write_text(SUITE)
    (home / "test_known.py").write_text(KNOWN_TEST)
    monkeypatch.setattr(result_cache, "CACHE_DIR", tmp_path / "steps")
    monkeypatch.setattr(targets, "fixes", lambda: {"TOY-BUG": FIX})
    # the audit's pytest runs where the toy's suite is: its node ids name it from there,
    # as the checkout's name its suites
    monkeypatch.setattr(suite_run, "REPO_ROOT", home)
    targets.register(FixableToy(home))
    try:
        yield tmp_path
    finally:
        targets.unregister("fixtoy")


def _audit(tmp: Path, *more: str) -> int:
    argv = ["audit", "--target", "fixtoy", "--profile", "ci", "--seed", "1", "--no-mutation"]
    return cli.main([*argv, "--out", str(tmp / "reports"), "--no-cache", *more])


def _report(tmp: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((tmp / "reports/fixtoy-1.0/findings.json").read_text())
    return data


def test_a_written_baseline_holds_with_no_fixes(
    toy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The pre-commit hook's ``audit --baseline FILE --no-fixes``, TOY-BUG accepted: the
    failure outside the region is TOY-BUG's, as the fix audit finds
    (``tests/audit/test_fixes.py`` compares the two on the same failures), so the gate
    holds; no fix is verified."""
    file = toy / "ctxaudit-baseline.toml"  # as `ctxaudit baseline` writes it
    file.write_text(baseline.render([baseline.Entry("TOY-BUG", "fixtoy", "T1", "upstream")]))
    assert _audit(toy, "--baseline", str(file), "--no-fixes") == 0, capsys.readouterr().out
    quick = _report(toy)
    assert [f["test"] for f in quick["attributed"]] == ["test_toy.py::test_outside"]
    assert quick["attributed"][0]["owners"] == ["TOY-BUG"] and not quick["findings"]
    assert not quick["fixes"] and not quick["fixed"]  # no fix verified: --no-fixes
    assert not (toy / "reports" / "fixtoy-fixes").exists()  # nor a patch written
