"""A harness that writes no test of its own (``examples/toymeter``): its package holds
its meter and an adapter to the budget concern (``concerns = {"budget": ...}``),
registered by its entry point; its suite is ctxaudit's shared budget lockstep
(``ctxaudit/targets/concern_suites``).

The meter has a planted bug, a call accepted at the call cap, as a maintainer's first
harness might: the audit finds it as B3, the rerun command its report prints fails again
as printed, and the fixed meter holds (its mutation gate: ``tests/test_installed.py``).
The hook-up's size is checked: the shared lockstep does the work.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxaudit import audit, targets

ROOT = Path(__file__).resolve().parents[1]

EXAMPLE = ROOT / "examples" / "toymeter"
#: the planted bug in the example's meter, and its fix
BUG, FIX = "self.calls > self.max_calls", "self.calls >= self.max_calls"


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """examples/toymeter as ``pip install`` would leave it: its package and its
    ``.dist-info`` with the entry point, on the path of this process and its children."""
    site = tmp_path / "site"
    home = site / "toymeter"
    shutil.copytree(EXAMPLE / "toymeter", home, ignore=shutil.ignore_patterns("__pycache__"))
    info = site / "toymeter-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toymeter\nVersion: 1.0\n")
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())
    points = project["project"]["entry-points"]["ctxaudit.targets"]
    (info / "entry_points.txt").write_text(
        "[ctxaudit.targets]\n" + "".join(f"{k} = {v}\n" for k, v in points.items())
    )
    path = os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])
    monkeypatch.setenv("PYTHONPATH", path.rstrip(os.pathsep))
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(targets, "_plugins_read", False)
    yield home
    targets.unregister("toymeter")
    for name in ("toymeter", "toymeter.meter", "toymeter.ctxaudit_target"):
        sys.modules.pop(name, None)


def test_a_harness_with_an_adapter_and_no_test_gets_its_finding_and_its_rerun(
    installed: Path, tmp_path: Path
) -> None:
    hookup = (EXAMPLE / "toymeter" / "ctxaudit_target.py").read_text().splitlines()
    code = [ln for ln in hookup if ln.strip() and not ln.lstrip().startswith(("#", '"""'))]
    assert len(code) <= 60, f"the hook-up is {len(code)} lines"
    assert not list(EXAMPLE.rglob("test_*.py")), "the example writes no test of its own"
    (target,) = audit.parse_target("toymeter")
    report = audit.run_target(target, "ci", 0, tmp_path / "reports")
    assert report.verdicts["B3"] == "fails", report.verdicts
    md = (tmp_path / "reports" / "toymeter-1.0" / "findings.md").read_text()
    reruns = [
        ln.split("Rerun: `", 1)[1].split("`")[0] for ln in md.splitlines() if "Rerun: `" in ln
    ]
    assert reruns and "--concern-target=toymeter" in reruns[0], md
    # as printed: bin/ctxaudit, from the checkout (an installed `ctxaudit test` runs there)
    rerun = subprocess.run(["bash", "-c", reruns[0]], cwd=ROOT, capture_output=True,
                           text=True, check=False)  # fmt: skip
    assert rerun.returncode == 1, rerun.stdout[-3000:] + rerun.stderr[-2000:]
    assert "B3: TokenMeter broke" in rerun.stdout, rerun.stdout[-3000:]
    # the failure's replay command, as the rerun printed it, runs that example alone
    # and fails the same way (it names the shared suite's target and version)
    (replay,) = [ln.strip() for ln in rerun.stdout.splitlines() if "--replay=" in ln]
    assert "--concern-target=toymeter" in replay, replay
    again = subprocess.run(["bash", "-c", replay], cwd=ROOT, capture_output=True, text=True,
                           check=False)  # fmt: skip
    assert again.returncode == 1, again.stdout[-3000:] + again.stderr[-2000:]
    assert "B3: TokenMeter broke" in again.stdout and "1 failed" in again.stdout, again.stdout
    # the report's own replay of the example, likewise
    (printed,) = [ln.split("`")[1] for ln in md.splitlines() if ln.startswith("Replay (")]
    again = subprocess.run(["bash", "-c", printed], cwd=ROOT, capture_output=True, text=True,
                           check=False)  # fmt: skip
    assert again.returncode == 1 and "1 failed" in again.stdout, printed + again.stdout[-3000:]

    meter = installed / "meter.py"
    assert meter.read_text().count(BUG) == 1
    meter.write_text(meter.read_text().replace(BUG, FIX))
    report = audit.run_target(target, "ci", 0, tmp_path / "fixed")
    assert set(report.verdicts.values()) == {"holds"}, report.verdicts
    # its mutation gate, with the shared suite against each mutant of the meter, is
    # tests/test_installed.py's, from the wheel
