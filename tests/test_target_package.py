"""A target from outside: a harness's own package, one folder, registered by one line
(its ``ctxaudit.targets`` entry point), with a pytest option and a mutation scope. It
is listed, resolved, run, mutated and reported with no file of ctxaudit changed.

The package is written to a temporary folder with its ``.dist-info`` (what
``pip install`` would leave), and that folder is put on the path of this process and
of every process the audit and the mutation runner start.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxaudit import audit, targets
from ctxaudit.targets import pytest_options

ROOT = Path(__file__).resolve().parents[1]

#: the harness's code: a counter with a cap, and the property T1 (the cap holds)
CODE = '''
def over(count, cap):
    """The cap is reached when the count is at or above it."""
    return count >= cap
'''

#: the harness's target: one class, everything in its own folder
TARGET = """
from pathlib import Path

from ctxaudit.targets.base import BaseTarget, Described, MutationScope, PytestOption, Resolved

HOME = Path(__file__).parent


class Toy(BaseTarget):
    name = "toyharness"
    properties = {"T1": "the cap holds"}
    suites = (str(HOME / "suite"),)
    spec_forms = "'toyharness'"
    mutation = MutationScope(
        "toyharness", "toycode", spec_option="--toyharness", config=HOME / "mutation.toml"
    )
    pytest_options = (PytestOption("--toyharness", "the toy tree (default: its own)"),)

    def resolve(self, spec=None, repo=None):
        return Resolved(self.name, "1.0", HOME, self.name, copy_dir="toycode")

    def expand(self, spec, repo=None):
        return [Described(self.name, self.name, "1.0")]


TARGET = Toy()
"""

SUITE = """
import pytest

import toycode


@pytest.mark.properties("T1")
@pytest.mark.parametrize("count", range(5))
def test_the_cap_holds(count, request):
    assert request.config.getoption("--toyharness") in ("", "toyharness")
    assert toycode.over(count, 2) == (count >= 2)
"""

MUTATION = """
[toyharness]
package = "toycode"
tests = ["{here}/suite"]
pytest_args = []

[[toyharness.files]]
path = "toycode/*.py"
functions = ["*"]

[[toyharness.properties]]
match = "*"
properties = ["T1"]
"""


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    site = tmp_path / "site"
    home = site / "toyharness"
    (home / "toycode").mkdir(parents=True)
    (home / "suite").mkdir()
    (home / "__init__.py").write_text("")
    (home / "target.py").write_text(textwrap.dedent(TARGET))
    (home / "toycode" / "__init__.py").write_text(textwrap.dedent(CODE))
    (home / "suite" / "test_toy.py").write_text(textwrap.dedent(SUITE))
    (home / "mutation.toml").write_text(MUTATION)
    info = site / "toyharness-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toyharness\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[ctxaudit.targets]\ntoyharness = toyharness.target:TARGET\n"
    )
    path = os.pathsep.join([str(site), str(home), os.environ.get("PYTHONPATH", "")])
    monkeypatch.setenv("PYTHONPATH", path.rstrip(os.pathsep))
    monkeypatch.syspath_prepend(str(home))
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(targets, "_plugins_read", False)
    yield home
    targets.unregister("toyharness")
    for name in ("toycode", "toyharness", "toyharness.target"):  # the next test's are new
        sys.modules.pop(name, None)


def test_an_installed_target_is_listed_resolved_and_takes_its_options(installed: Path) -> None:
    assert "toyharness" in targets.names()
    assert audit.parse_target("toyharness") == [
        targets.Described("toyharness", "toyharness", "1.0")
    ]
    assert "--toyharness" in pytest_options.names()
    assert targets.get("toyharness") in targets.mutated()
    # an audit's help and its errors name it among the targets
    done = subprocess.run([sys.executable, "-m", "ctxaudit", "audit", "--help"], cwd=ROOT,
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert "toyharness: 'toyharness'" in " ".join(done.stdout.split()), done.stdout
    with pytest.raises(targets.TargetError, match=r"toyharness: 'toyharness'"):
        targets.parse("nosuch")
    with pytest.raises(targets.TargetError, match=r"no registered target \(.*toyharness\)"):
        targets.parse(str(installed / "toycode"))


def test_an_installed_target_is_audited_and_mutated(installed: Path, tmp_path: Path) -> None:
    (target,) = audit.parse_target("toyharness")
    report = audit.run_target(target, "ci", 0, tmp_path / "reports")
    assert report.verdicts == {"T1": "holds"}
    out = tmp_path / "mutation"
    proc = subprocess.run(
        [sys.executable, "-m", "mutation", "run", "--target", "toyharness", "--out", str(out),
         "--seeds", "1", "--recheck", "none", "--no-cache", "--no-coverage", "-q"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    data = json.loads((out / "mutation.json").read_text())
    files = data["files"]
    assert list(files) == ["toycode/__init__.py"], list(files)
    statuses = {m["status"] for m in files["toycode/__init__.py"]["mutants"]}
    assert "Killed" in statuses, statuses  # the >= boundary's mutant is caught by T1
    assert (out / "mutation.md").is_file()


def test_a_finding_of_an_installed_target_reruns_as_printed(
    installed: Path, tmp_path: Path
) -> None:
    """The target's suite lives in its own folder: the rerun the report prints names
    the test whole and counts node ids from there, so that it runs from another folder
    and fails as the audit did (not "file or directory not found", not a pass)."""
    broken = CODE.replace("count >= cap", "count > cap")  # a planted bug: the cap passes
    (installed / "toycode" / "__init__.py").write_text(textwrap.dedent(broken))
    (target,) = audit.parse_target("toyharness")
    report = audit.run_target(target, "ci", 0, tmp_path / "reports")
    assert report.verdicts == {"T1": "fails"}
    md = (tmp_path / "reports" / "toyharness-1.0" / "findings.md").read_text()
    reruns = [
        ln.split("Rerun: `", 1)[1].split("`")[0] for ln in md.splitlines() if "Rerun: `" in ln
    ]
    assert reruns, md
    assert f"--rootdir={installed / 'suite'}" in reruns[0], reruns[0]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    command = reruns[0].replace("bin/ctxaudit", str(ROOT / "bin" / "ctxaudit"), 1)
    rerun = subprocess.run(["bash", "-c", command], cwd=elsewhere, capture_output=True,
                           text=True, check=False)  # fmt: skip
    assert rerun.returncode == 1, rerun.stdout[-3000:] + rerun.stderr[-2000:]
    assert "1 failed" in rerun.stdout, rerun.stdout[-3000:]
