"""The maintainers' pytest plugin (ctxaudit/pytest_ctxaudit.py), from a harness's own
project: ``pytest --ctxaudit=SPEC`` adds a test per property, a broken tree fails naming
the property, a baseline the project owns passes while only its entries reproduce and
fails naming an entry that no longer does, and a run that does not ask is unchanged.

Each run is a real ``pytest`` process in a temporary project, as a maintainer runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

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


def test_a_projects_own_properties_marker_never_warns(tmp_path: Path) -> None:
    """A harness's own suite names its properties with ``@pytest.mark.properties`` (as
    docs/targets.md says): no unknown-marker warning, even under --strict-markers; and
    with the audit's tests asked for, the run says how many of those selected are
    the audit's (pytest's "collected" counts the project's only)."""
    project = _project(tmp_path)
    marker = "properties"  # (spelt apart: docs/properties.md lists this repository's uses)
    (project / "tests" / "test_marked.py").write_text(
        f"import pytest\n\n@pytest.mark.{marker}('B1')\ndef test_marked():\n    assert True\n"
    )
    plain = _pytest(project, "--strict-markers", "-W", "error::pytest.PytestUnknownMarkWarning")
    assert plain.returncode == 0, plain.stdout[-3000:]
    assert "2 passed" in plain.stdout and "warning" not in plain.stdout.lower(), plain.stdout
    asked = _pytest(project, "--ctxaudit=ledger", "--strict-markers")
    assert asked.returncode == 0, asked.stdout[-3000:]
    assert "ctxaudit: 10 of the 12 selected test(s) are the audit's properties" in asked.stdout


def test_a_broken_tree_fails_naming_the_property(tmp_path: Path) -> None:
    tree = _broken_gitreins(tmp_path / "tree", "b2-input-cap-strict")
    proc = _pytest(_project(tmp_path), f"--ctxaudit={tree}")
    assert proc.returncode == 1, proc.stdout[-3000:]
    out = proc.stdout
    assert "PASSED tests/test_own.py::test_own" in out
    assert "FAILED ctxaudit/gitreins-0.17.1::B2" in out, out[-3000:]
    assert "PASSED ctxaudit/gitreins-0.17.1::B1" in out
    assert "gitreins-0.17.1 breaks B2:" in out and "new finding: B2" in out
    # the block says how to run it again, as its report does; run as printed (a checkout's
    # bin/ctxaudit, from the checkout), the shrunk example alone fails again
    replays = [ln.split("replay: ", 1)[1] for ln in out.splitlines()
               if ln.startswith("  replay: ")]  # fmt: skip
    assert replays and any(ln.startswith("  rerun: ") for ln in out.splitlines()), out[-3000:]
    again = subprocess.run(["bash", "-c", replays[0]], cwd=ROOT, capture_output=True, text=True,
                           check=False)  # fmt: skip
    assert again.returncode == 1 and "1 failed" in again.stdout, replays[0] + again.stdout[-3000:]


def test_the_projects_baseline_owns_the_gate(tmp_path: Path) -> None:
    """``[tool.ctxaudit]`` names the target and the baseline: with every reproducing
    known finding accepted the run passes; without one entry it fails naming the
    finding; an entry that no longer reproduces fails naming the entry. (The audit runs
    once; the later runs judge its report under the changed baseline.)"""
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
    report = tmp_path / "findings.json"
    written = project / ".pytest_cache/d/ctxaudit-reports/gitreins-0.17.1/findings.json"
    report.write_text(written.read_text())

    entries = text.split("\n[[accepted]]\n")
    kept = [e for e in entries if 'id = "GR-V8-THRESHOLD-UNVALIDATED"' not in e]
    baseline.write_text("\n[[accepted]]\n".join(kept))
    failed = _reported(project, exit_code=1, report=report)
    assert failed.returncode == 1
    assert "FAILED ctxaudit/gitreins-0.17.1::V8" in failed.stdout
    assert "known finding GR-V8-THRESHOLD-UNVALIDATED" in failed.stdout

    baseline.write_text(
        text + '\n[[accepted]]\nid = "GR-GAP-062"\ntarget = "gitreins"\nproperty = "V7"\n'
        'why = "fixed in 0.15.0"\n'
    )
    stale = _reported(project, exit_code=1, report=report)
    assert stale.returncode == 1
    assert "FAILED ctxaudit/baseline::GR-GAP-062" in stale.stdout
    assert "baseline entry GR-GAP-062 no longer reproduces" in stale.stdout


#: a real report of gitreins 0.14.0 (the audit's, with its attributions): 7 failures
#: outside GR-GAP-062's region, on V1, V7 and V8/V1, that its fix explains
REPORT_0140 = ROOT / "reports" / "gitreins-0.14.0" / "findings.json"

#: the project's conftest: the plugin's audit process replaced by one that writes
#: REPORT (REPORT_0140 unless given) and exits with FAKE_EXIT: what the plugin makes of
#: an audit's report, in a second, with no audit run
FAKE_AUDIT = """
import json, os, shutil, subprocess
from pathlib import Path
from ctxaudit import pytest_ctxaudit as plugin

class _Audit:
    @staticmethod
    def run(cmd, **kw):
        data = json.loads(Path(REPORT).read_text())
        out = Path(cmd[cmd.index("--out") + 1]) / f"{data['target']}-{data['version']}"
        out.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPORT, out / "findings.json")
        line = "ctxaudit: the audit's own last line"
        return subprocess.CompletedProcess(cmd, int(os.environ["FAKE_EXIT"]), line, "")

plugin.subprocess = _Audit
"""


def _reported(
    project: Path, *args: str, exit_code: int, report: Path = REPORT_0140
) -> subprocess.CompletedProcess[str]:
    (project / "conftest.py").write_text(f"REPORT = {str(report)!r}\n{FAKE_AUDIT}")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-rA", "-p", "no:randomly", *args],
        cwd=project, capture_output=True, text=True, check=False,
        env={**os.environ, "FAKE_EXIT": str(exit_code)},
    )  # fmt: skip


def _block(out: str, nodeid: str) -> str:
    """A failure's block in pytest's output: from its header to the next one."""
    after = out.split(f"_ {nodeid} _", 1)[1].split("\n", 1)[1]
    return after.split("\n___", 1)[0].split("\n===", 1)[0]


def test_a_failure_the_audit_attributes_is_its_known_finding_s_once(tmp_path: Path) -> None:
    """V7 on 0.14.0 fails through GR-GAP-062 alone (the failure its fix explains is
    not also a "new finding"), V1 too (a failure GR-GAP-062's fix explains, although
    GR-GAP-062 is V7's), each failure is one block, and the audit's output is not
    repeated under each."""
    project = _project(tmp_path, '[tool.ctxaudit]\ntarget = "gitreins==0.14.0"\n')
    proc = _reported(project, exit_code=1)
    out = proc.stdout
    assert proc.returncode == 1, out[-3000:]
    v7 = _block(out, "ctxaudit/gitreins-0.14.0::V7")
    assert "new finding" not in v7 and v7.count("known finding GR-GAP-062") == 1, v7
    v1 = _block(out, "ctxaudit/gitreins-0.14.0::V1")
    assert "known finding GR-GAP-062" in v1 and "explains: V1:" in v1, v1
    assert "the audit's own last line" not in out
    assert "PASSED ctxaudit/gitreins-0.14.0::B1" in out


def test_a_baseline_holds_in_the_plugin_wherever_it_holds_in_the_audit(tmp_path: Path) -> None:
    """Every known finding that reproduces on 0.14.0 accepted: the audit's baseline
    verdict holds (``ctxaudit.baseline.judge``), and so does every test of the plugin."""
    from ctxaudit.baseline import Baseline, Entry, judge, render

    data = json.loads(REPORT_0140.read_text())
    entries = [Entry(k["id"], "gitreins", k["property"], "upstream")
               for k in data["known"] if k["affects"]]  # fmt: skip
    project = _project(
        tmp_path, '[tool.ctxaudit]\ntarget = "gitreins==0.14.0"\nbaseline = "b.toml"\n'
    )
    (project / "b.toml").write_text(render(entries))
    report = SimpleNamespace(**{**data, "findings": []})
    assert not judge(Baseline(project / "b.toml", tuple(entries)), [report]).fails
    proc = _reported(project, exit_code=0)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "PASSED ctxaudit/gitreins-0.14.0::V1" in proc.stdout
    assert "PASSED ctxaudit/baseline::GR-GAP-062" in proc.stdout


def test_without_the_cache_plugin_it_runs(tmp_path: Path) -> None:
    project = _project(tmp_path, '[tool.ctxaudit]\ntarget = "ledger"\n')
    proc = _pytest(project, "-p", "no:cacheprovider", "--collect-only", "-q")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "ctxaudit/ledger-0.1.0::S1" in proc.stdout


def test_path_and_k_selection_leave_the_audit_out_unless_they_select_it(
    tmp_path: Path,
) -> None:
    """pytest's convention: the table's tests join a run that names no path, or names
    them; ``-k`` selects among them as among the project's own."""
    project = _project(tmp_path, '[tool.ctxaudit]\ntarget = "ledger"\n')

    def collected(*args: str) -> list[str]:
        proc = _pytest(project, "--collect-only", "-q", *args)
        assert proc.returncode in (0, 5), proc.stdout[-2000:] + proc.stderr[-2000:]
        return [ln for ln in proc.stdout.splitlines() if "::" in ln]

    everything = collected()
    assert "tests/test_own.py::test_own" in everything
    assert "ctxaudit/ledger-0.1.0::S1" in everything
    assert collected("tests/test_own.py::test_own") == ["tests/test_own.py::test_own"]
    assert collected("-k", "test_own") == ["tests/test_own.py::test_own"]
    assert collected("-k", "S1") == ["ctxaudit/ledger-0.1.0::S1"]
    both = collected("ctxaudit/ledger-0.1.0::S2", "tests/test_own.py")
    assert both == ["tests/test_own.py::test_own", "ctxaudit/ledger-0.1.0::S2"]


def test_a_baseline_entry_whose_check_did_not_run_is_an_error(tmp_path: Path) -> None:
    """GR-GAP-062's check ended in ctxaudit's own error: its entry is neither "no longer
    reproduces" (a failure) nor a pass, but an error saying why; the audit's last lines
    are shown once (it ended with exit 2)."""
    data = json.loads(REPORT_0140.read_text())
    for k in data["known"]:
        if k["id"] == "GR-GAP-062":
            k.update(affects=False, could_not_check="its regression test's harness failed")
    report = tmp_path / "findings.json"
    report.write_text(json.dumps(data))
    project = _project(
        tmp_path, '[tool.ctxaudit]\ntarget = "gitreins==0.14.0"\nbaseline = "b.toml"\n'
    )
    (project / "b.toml").write_text(
        '[[accepted]]\nid = "GR-GAP-062"\ntarget = "gitreins"\nwhy = "upstream"\n'
    )
    proc = _reported(project, exit_code=2, report=report)
    out = proc.stdout
    assert "ERROR ctxaudit/baseline::GR-GAP-062" in out, out[-3000:]
    assert "its regression test's harness failed" in out and "no longer reproduces" not in out
    assert out.count("the audit's own last line") == 1


def test_an_audit_that_did_not_check_everything_never_passes(tmp_path: Path) -> None:
    """The audit ended with exit 2 (could not check) for something none of its tests
    stands for (its reports name nothing unchecked): the tests that hold pass, the run
    does not, and says why."""
    project = _project(tmp_path, '[tool.ctxaudit]\ntarget = "gitreins==0.14.0"\n')
    proc = _reported(project, "-k", "B1", exit_code=2)
    assert "PASSED ctxaudit/gitreins-0.14.0::B1" in proc.stdout, proc.stdout[-3000:]
    assert proc.returncode == 1 and "no test above says what" in proc.stdout


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ("target = 5", "target must be a target spec or a list of them (not empty), not 5"),
        ('target = ""', "target must be a target spec or a list of them (not empty), not ''"),
        ('target = "ledger"\nbaseline = 5', "baseline must be a path, not 5"),
        ('target = "ledger"\noptions = ["a"]', "options must be a table of audit options"),
        ('targets = "ledger"', "has unknown key(s) targets (known: target, baseline, options)"),
    ],
)
def test_a_tool_ctxaudit_table_it_cannot_use_is_one_usage_error(
    tmp_path: Path, table: str, says: str
) -> None:
    """Not an INTERNALERROR, not a target nobody asked for, not a key silently ignored
    (issue #47, section 4)."""
    project = _project(tmp_path, f"[tool.ctxaudit]\n{table}\n")
    proc = _pytest(project, "--collect-only", "-q")
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR, proc.stdout + proc.stderr
    assert "INTERNALERROR" not in proc.stdout + proc.stderr
    assert f"[tool.ctxaudit] {says}" in proc.stderr, proc.stderr


def test_a_project_module_named_ctxaudit_does_not_shadow_the_audit(tmp_path: Path) -> None:
    project = _project(tmp_path, '[tool.ctxaudit]\ntarget = "ledger"\n')
    (project / "ctxaudit.py").write_text("raise SystemExit('the project s own ctxaudit.py')\n")
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    proc = subprocess.run(
        # the pytest command (python -m pytest would itself import the project's module
        # in place of the plugin's package): the audit the plugin starts must not
        [str(Path(sys.executable).parent / "pytest"), "-rA", "-p", "no:cacheprovider",
         "ctxaudit/ledger-0.1.0"],
        cwd=project, capture_output=True, text=True, check=False, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "PASSED ctxaudit/ledger-0.1.0::S6" in proc.stdout
    # and the reports' temporary folder (no cache plugin) went with the run
    assert not list(tmp_path.glob("ctxaudit-pytest-*"))
