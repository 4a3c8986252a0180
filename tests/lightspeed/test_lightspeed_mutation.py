"""The mutation audit on a lightspeed-stack tree: the named mutants must be killed.

``python -m mutation run --target lightspeed-stack`` on the selected tree (default
main) with only the catalogue's lightspeed-stack entries (LCORE-3883/3908's shapes
in the tree's own code: a compacted turn not written, written twice or with the
explicit input, a summary marker dropped, the trigger at the threshold). The
worker runs in the tree's environment with every mutant in one process (the
service starts once); the gate must pass, each entry killed by a fixed program
(``tests/lightspeed/inenv/test_programs.py``), which holds whatever the seed.
The whole scope (every operator on the functions that write turns) is the audit's
job: ``bin/ctxaudit audit --target lightspeed-stack@main``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ctxaudit.targets.lightspeed.tree import REPO_ROOT
from mutation import catalogue

pytestmark = pytest.mark.lightspeed

#: the seed-free fixed programs: a named mutant must fall to one of them, whatever the
#: seed, without the lockstep's search
PROGRAMS = "tests/lightspeed/inenv/test_programs.py"


def test_named_mutants_are_killed_in_the_trees_environment(
    lightspeed_repo: Path, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    spec = request.config.getoption("--lightspeed") or "lightspeed-stack@main"
    named = [e.id for e in catalogue.load(target="lightspeed-stack")]
    assert len(named) >= 5
    cmd = [
        sys.executable, "-m", "mutation", "run", "--target", "lightspeed-stack",
        "--lightspeed", spec, "--lightspeed-repo", str(lightspeed_repo),
        "--only", "catalogue:*", "--tests", PROGRAMS, "--seeds", "1", "--recheck", "none",
        "--no-cache", "--no-coverage", "--out", str(tmp_path), "-q",
    ]  # fmt: skip
    proc = subprocess.run(
        cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=1200, check=False
    )
    output = (proc.stdout + proc.stderr)[-3000:]
    assert proc.returncode == 0, f"the gate failed or the run did not end:\n{output}"
    doc = json.loads((tmp_path / "mutation.json").read_text())
    verdicts = {
        m["id"]: m["status"]
        for f in doc["files"].values()
        for m in f["mutants"]
        if m["id"].startswith("catalogue:")
    }
    assert verdicts == {f"catalogue:{i}": "Killed" for i in named}, output
