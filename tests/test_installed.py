"""ctxaudit as a harness's maintainers get it: the wheel, built from this checkout and
installed into a fresh environment in a temporary folder with no checkout in sight.

From there: ``ctxaudit --version``; the audits of the ledger, of a gitreins release and
of a PyPI target's pinned release (langchain: its suite runs in the release's own
environment, importing the installed ctxaudit) give the verdicts of the checkout's
committed reports (its release audits); the
commands a report prints run where it prints them (``ctxaudit test ...``); a baseline
the project owns makes the gitreins audit pass (exit 0) and, with one entry removed,
fail naming it (exit 1); ``pytest --ctxaudit=PATH`` in a toy harness project with a
broken tree fails naming the property. The
installation is never written to, and its only import name is ``ctxaudit``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
UV = Path(sys.executable).parent / "uv"

pytestmark = pytest.mark.slow


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)


def _wheel(tmp: Path) -> Path:
    """The wheel of this checkout's files (tracked and new, not ignored), built in a copy."""
    src = tmp / "src"
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    for rel in listed:
        if rel.startswith("reports/") or not (ROOT / rel).is_file():
            continue
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, src / rel)
    proc = _run([str(UV), "build", "--wheel", "-q", "-o", str(tmp / "dist"), str(src)], tmp,
                dict(os.environ))  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    (wheel,) = (tmp / "dist").glob("ctxaudit-*.whl")
    return wheel


def _environment(tmp: Path, wheel: Path, python: str, extra: str = "") -> Path:
    """A fresh virtual environment with the wheel installed (its pins: requirements.lock),
    with ``extra`` (``[gitreins]``: the gitreins target's runtime)."""
    env_dir = tmp / "env"
    made = _run([str(UV), "venv", "-q", "--python", python, str(env_dir)], tmp, dict(os.environ))
    assert made.returncode == 0, made.stderr[-2000:]
    installed = _run(
        [str(UV), "pip", "install", "-q", "--python", str(env_dir / "bin" / "python"),
         f"ctxaudit{extra} @ {wheel.as_uri()}", "-c", str(ROOT / "requirements.lock")],
        tmp, dict(os.environ),
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr[-3000:]
    return env_dir


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The checkout's wheel, built once for this file's tests (in one worker)."""
    return _wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="module")
def installed(
    wheel: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Path, dict[str, str]]]:
    tmp = tmp_path_factory.mktemp("installed")
    # the plain install (no extra), as `pip install ctxaudit` gives it: every default
    # target, gitreins included (its pinned release fetched into the cache), is checked
    env_dir = _environment(tmp, wheel, sys.executable)
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("CTXAUDIT_", "PYTHON", "VIRTUAL_"))
    }
    env |= {"CTXAUDIT_HOME": str(tmp / "home"), "PATH": f"{env_dir / 'bin'}:{env['PATH']}"}
    yield env_dir, env


def _files(folder: Path) -> dict[str, int]:
    """Every file under ``folder`` but Python's own bytecode caches (``__pycache__``,
    written by the interpreter on import, as for any installed package)."""
    return {
        str(p.relative_to(folder)): p.stat().st_size
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_the_installed_package_audits_from_outside(
    installed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    env_dir, env = installed
    ctxaudit = str(env_dir / "bin" / "ctxaudit")
    site = next((env_dir / "lib").glob("python3.*/site-packages"))
    package = _files(site / "ctxaudit")
    project = tmp_path / "harness"
    project.mkdir()

    version = _run([ctxaudit, "--version"], project, env)
    assert version.returncode == 0 and version.stdout.startswith("ctxaudit 0."), version
    names = _run([str(env_dir / "bin" / "python"), "-c", "import model"], project, env)
    assert "No module named 'model'" in names.stderr

    # the ledger and a gitreins release: the verdicts of the checkout's committed
    # reports of them (its release audits; the known findings' checks are seed-free)
    audit = [ctxaudit, "audit", "--no-mutation", "--no-fixes", "--profile", "ci", "--seed", "0"]
    for spec, expected in (("ledger", 0), ("gitreins==0.17.1", 1)):
        got = _run([*audit, "--target", spec], project, env)
        assert got.returncode == expected, got.stdout[-3000:] + got.stderr[-2000:]
    folders = sorted((project / "reports").glob("*/findings.json"))
    assert [p.parent.name for p in folders] == ["gitreins-0.17.1", "ledger-0.1.0"], folders
    for report in folders:
        committed = ROOT / "reports" / report.parent.name / "findings.json"
        theirs, ours = (json.loads(p.read_text())["verdicts"] for p in (report, committed))
        assert theirs == ours, (report.parent.name, theirs, ours)
    assert (project / "reports" / "gitreins-0.17.1" / "findings.md").is_file()

    # a baseline the project owns: exit 0 while only its entries reproduce
    baseline = project / "ctxaudit-baseline.toml"
    made = _run([ctxaudit, "baseline", "--target", "gitreins==0.17.1", "--out", str(baseline)],
                project, env)  # fmt: skip
    assert made.returncode == 0, made.stderr[-2000:]
    gate = [*audit, "--target", "gitreins==0.17.1", "--baseline", str(baseline)]
    passed = _run(gate, project, env)
    assert passed.returncode == 0, passed.stdout[-3000:] + passed.stderr[-2000:]
    entries = baseline.read_text().split("\n[[accepted]]\n")
    dropped = next(e for e in entries[1:] if "GR-V8-THRESHOLD-UNVALIDATED" in e)
    baseline.write_text("\n[[accepted]]\n".join(e for e in entries if e is not dropped))
    failed = _run(gate, project, env)
    assert failed.returncode == 1, failed.stdout[-3000:]
    assert "GR-V8-THRESHOLD-UNVALIDATED" in failed.stdout + failed.stderr

    # pytest --ctxaudit in a toy harness project, on a broken tree of its own
    tree = project / "gitreins-tree"
    broken = subprocess.run(
        [sys.executable, "-m", "tests.broken_target", "gitreins", "b2-input-cap-strict",
         str(tmp_path / "broken")],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    (option,) = json.loads(broken.stdout.strip().splitlines()[-1])["options"]
    shutil.copytree(option.partition("=")[2], tree)
    (project / "tests").mkdir()
    (project / "tests" / "test_own.py").write_text("def test_own():\n    assert True\n")
    plugin = _run([str(env_dir / "bin" / "python"), "-m", "pytest", "-rA", f"--ctxaudit={tree}"],
                  project, env)  # fmt: skip
    assert plugin.returncode == 1, plugin.stdout[-3000:]
    assert "FAILED ctxaudit/gitreins-0.17.1::B2" in plugin.stdout
    assert "PASSED tests/test_own.py::test_own" in plugin.stdout

    assert _files(site / "ctxaudit") == package, "a run wrote into the installation"


def _other_pythons() -> list[str]:
    """The interpreters of the other supported versions this machine has (pyenv's)."""
    found = []
    for minor in ("3.12", "3.13"):
        for candidate in sorted(Path.home().glob(f".pyenv/versions/{minor}.*/bin/python{minor}")):
            found.append(str(candidate))
            break
    return found


@pytest.mark.parametrize("python", _other_pythons() or [pytest.param("", marks=pytest.mark.skip(
    reason="no Python 3.12 or 3.13 on this machine (pyenv)"))])  # fmt: skip
def test_it_installs_and_runs_on_the_other_supported_pythons(
    python: str, wheel: Path, tmp_path: Path
) -> None:
    env_dir = _environment(tmp_path, wheel, python)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CTXAUDIT_", "VIRTUAL_"))}
    env["CTXAUDIT_HOME"] = str(tmp_path / "home")
    # the smoke profile: what is asked is that it installs and runs there; the search
    # is the same on every Python, and the gate's profile runs on 3.11 above
    ledger = _run(
        [str(env_dir / "bin" / "ctxaudit"), "audit", "--target", "ledger", "--no-mutation",
         "--no-fixes", "--profile", "smoke", "--seed", "0"],
        tmp_path, env,
    )  # fmt: skip
    assert ledger.returncode == 0, ledger.stdout[-3000:] + ledger.stderr[-2000:]
    verdicts = json.loads(next((tmp_path / "reports").glob("ledger-*/findings.json")).read_text())
    assert set(verdicts["verdicts"].values()) == {"holds"}


#: the toy harness of tests/test_target_package.py (its target, code, suite and mutation
#: scope), here shipped as a package of its own, registered by one entry point
TOY_CONFTEST = """
import sys
from pathlib import Path

# the code under test; appended, so that the mutation runner's copy (put first) wins
sys.path.append(str(Path(__file__).parents[1]))
"""

TOY_PYPROJECT = """
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "toyharness"
version = "1.0"

[project.entry-points."ctxaudit.targets"]
toyharness = "toyharness.target:TARGET"

[tool.setuptools]
packages = ["toyharness", "toyharness.toycode", "toyharness.suite"]

[tool.setuptools.package-data]
toyharness = ["mutation.toml"]
"""


def test_a_target_from_its_own_package_is_audited_and_mutated(
    installed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """A harness's target package installed beside ctxaudit: listed, audited and
    mutated end to end with no file of ctxaudit changed."""
    from tests.test_target_package import CODE, MUTATION, SUITE, TARGET

    env_dir, env = installed
    src = tmp_path / "toyharness-src"
    home = src / "toyharness"
    for folder in (home / "toycode", home / "suite"):
        folder.mkdir(parents=True)
    (home / "__init__.py").write_text("")
    (home / "target.py").write_text(TARGET)
    (home / "mutation.toml").write_text(MUTATION)
    (home / "toycode" / "__init__.py").write_text(CODE)
    (home / "suite" / "__init__.py").write_text("")
    (home / "suite" / "conftest.py").write_text(TOY_CONFTEST)
    (home / "suite" / "test_toy.py").write_text(SUITE)
    (src / "pyproject.toml").write_text(TOY_PYPROJECT)
    added = _run([str(UV), "pip", "install", "-q", "--python", str(env_dir / "bin" / "python"),
                  str(src)], tmp_path, dict(os.environ))  # fmt: skip
    assert added.returncode == 0, added.stderr[-3000:]
    ctxaudit = str(env_dir / "bin" / "ctxaudit")
    try:
        help_text = _run([ctxaudit, "audit", "--help"], tmp_path, env).stdout
        assert "toyharness" in help_text
        got = _run([ctxaudit, "audit", "--target", "toyharness", "--mutation", "--no-peer",
                    "--profile", "ci", "--seed", "0", "--out", str(tmp_path / "reports")],
                   tmp_path, env)  # fmt: skip
        assert got.returncode == 0, got.stdout[-3000:] + got.stderr[-2000:]
        report = json.loads((tmp_path / "reports/toyharness-1.0/findings.json").read_text())
        assert report["verdicts"] == {"T1": "holds"}
        mutants = json.loads((tmp_path / "reports/toyharness-1.0/mutation.json").read_text())
        statuses = {m["status"] for m in mutants["files"]["toycode/__init__.py"]["mutants"]}
        assert "Killed" in statuses, statuses
    finally:
        _run([str(UV), "pip", "uninstall", "-q", "--python", str(env_dir / "bin" / "python"),
              "toyharness"], tmp_path, dict(os.environ))  # fmt: skip


def test_a_pypi_target_and_the_printed_commands_run_from_the_wheel(
    installed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """langchain's suite runs in the release's own environment (it imports the installed
    ctxaudit, and nothing else of the caller's environment): the verdicts of the
    checkout's audit. A new finding's rerun command, and the replay command that run
    prints, run from the user's folder as the report prints them."""
    env_dir, env = installed
    # the environments the checkout's suites build (tests/langchain): reused, not rebuilt
    env = {**env, "CTXAUDIT_CACHE": str(ROOT / ".cache")}
    ctxaudit = str(env_dir / "bin" / "ctxaudit")
    project = tmp_path / "harness"
    project.mkdir()
    audit = [ctxaudit, "audit", "--no-mutation", "--no-fixes", "--no-cache", "--jobs", "1"]

    got = _run([*audit, "--target", "langchain"], project, env)
    assert "COULD NOT CHECK" not in got.stdout + got.stderr, got.stdout[-3000:] + got.stderr
    assert got.returncode == 1, got.stdout[-3000:] + got.stderr[-2000:]  # its known finding
    assert "seed 0 (profile ci is derandomized)" in got.stdout
    (theirs,) = (project / "reports").glob("langchain-*/findings.json")
    # the checkout's verdicts: its committed report of the release (same profile and seed)
    ours = ROOT / "reports" / theirs.parent.name / "findings.json"
    assert ours.is_file(), f"no committed report of {theirs.parent.name}"
    assert json.loads(theirs.read_text())["verdicts"] == json.loads(ours.read_text())["verdicts"]
    assert json.loads(theirs.read_text())["seed"] == 0
    # a known finding's reproduction, as findings.md prints it: its regression test runs
    # in the release's environment and passes (the finding reproduces)
    affecting = [k for k in json.loads(theirs.read_text())["known"] if k["affects"]]
    assert affecting, theirs.read_text()[:2000]
    command = affecting[0]["reproduce"]
    assert command.split(" ctxaudit test ", 1)[0].startswith("CTXAUDIT_FINDINGS="), command
    assert f"`{command}`" in (theirs.parent / "findings.md").read_text()
    reproduced = subprocess.run(["bash", "-c", command], cwd=project, env=env,
                                capture_output=True, text=True, check=False)  # fmt: skip
    assert reproduced.returncode == 0, reproduced.stdout[-3000:] + reproduced.stderr[-2000:]
    assert "1 passed" in reproduced.stdout, reproduced.stdout[-3000:]

    # a broken gitreins tree: a new finding, its rerun command, the replay it prints
    broken = subprocess.run(
        [sys.executable, "-m", "tests.broken_target", "gitreins", "b2-input-cap-strict",
         str(tmp_path / "broken")],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    (option,) = json.loads(broken.stdout.strip().splitlines()[-1])["options"]
    tree = option.partition("=")[2]
    got = _run([*audit, "--target", tree, "--out", "broken"], project, env)
    assert got.returncode == 1, got.stdout[-3000:] + got.stderr[-2000:]
    (md,) = (project / "broken").glob("gitreins-*/findings.md")
    # a finding Hypothesis shrank: its rerun prints the command that replays its example
    shrunk = [f for f in md.read_text().split("\n### ") if "Minimal reproduction" in f]
    reruns = [ln.split("Rerun: `", 1)[1].rstrip("`") for f in shrunk for ln in f.splitlines()
              if ln.startswith("Test: ") and "Rerun: `" in ln]  # fmt: skip
    assert reruns, md.read_text()
    assert " ctxaudit test " in f" {reruns[0]}" and "bin/ctxaudit" not in reruns[0], reruns[0]
    rerun = subprocess.run(["bash", "-c", reruns[0]], cwd=project, env=env, capture_output=True,
                           text=True, check=False)  # fmt: skip
    assert rerun.returncode == 1, rerun.stdout[-3000:] + rerun.stderr[-2000:]
    assert "1 failed" in rerun.stdout, rerun.stdout[-3000:]
    replays = [ln.strip() for ln in rerun.stdout.splitlines()
               if ln.strip().startswith(("ctxaudit test ", "CTXAUDIT_PROFILE="))
               and "--replay=" in ln]  # fmt: skip
    assert replays, rerun.stdout[-3000:]
    again = subprocess.run(["bash", "-c", replays[0]], cwd=project, env=env,
                           capture_output=True, text=True, check=False)  # fmt: skip
    assert again.returncode == 1, again.stdout[-3000:] + again.stderr[-2000:]
    assert "1 failed" in again.stdout and "--replay=" in replays[0], again.stdout[-3000:]


#: the registered PyPI targets the tests above do not audit from the wheel (gitreins and
#: langchain: above; the ledger: its own; lightspeed-stack needs its repository)
OTHER_PYPI = ("openai-agents", "pydantic-ai", "google-adk", "strands-agents")


def test_every_other_pypi_target_is_checked_from_the_wheel(
    installed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """Each other PyPI target's current release, audited from the wheel in an empty
    folder: its suites run in the release's environment importing the installed
    ctxaudit, nothing reads could-not-check, and each property's verdict is the one the
    checkout's committed report of that release gives (the known findings' checks are
    seed-free programs; the search runs the smoke profile: what is asked here is that
    every suite runs from the wheel, the search is the checkout's)."""
    env_dir, env = installed
    env = {**env, "CTXAUDIT_CACHE": str(ROOT / ".cache")}  # the checkout suites' environments
    project = tmp_path / "harness"
    project.mkdir()
    named = [w for name in OTHER_PYPI for w in ("--target", name)]
    got = _run([str(env_dir / "bin" / "ctxaudit"), "audit", *named, "--no-mutation",
                "--no-fixes", "--no-cache", "--profile", "smoke", "--seed", "0", "--jobs", "2"],
               project, env)  # fmt: skip
    said = got.stdout[-3000:] + got.stderr[-2000:]
    assert "COULD NOT CHECK" not in got.stdout + got.stderr and got.returncode == 1, said
    reports = sorted((project / "reports").glob("*/findings.json"))
    assert sorted(p.parent.name.rsplit("-", 1)[0] for p in reports) == sorted(OTHER_PYPI), said
    for report in reports:
        committed = ROOT / "reports" / report.parent.name / "findings.json"
        assert committed.is_file(), f"no committed report of {report.parent.name}"
        theirs, ours = (json.loads(p.read_text())["verdicts"] for p in (report, committed))
        assert theirs == ours, (report.parent.name, theirs, ours)


def test_a_harness_with_no_test_of_its_own_reaches_its_finding_and_its_gate_from_the_wheel(
    installed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """examples/toymeter installed beside the wheel: its adapter imports ctxaudit's budget
    protocol in the audit's own process (no model, no Hypothesis there), and ctxaudit's
    shared budget suite is its suite. The planted bug is B3 (exit 1); fixed, every
    property holds and its mutation gate passes (exit 0)."""
    env_dir, env = installed
    python = str(env_dir / "bin" / "python")
    ctxaudit = str(env_dir / "bin" / "ctxaudit")
    audit = [ctxaudit, "audit", "--target", "toymeter", "--profile", "ci", "--seed", "0"]
    src = tmp_path / "toymeter"
    shutil.copytree(
        ROOT / "examples" / "toymeter", src, ignore=shutil.ignore_patterns("__pycache__")
    )
    meter = src / "toymeter" / "meter.py"
    try:
        for fixed in (False, True):
            if fixed:
                bug = "self.calls > self.max_calls"
                meter.write_text(meter.read_text().replace(bug, "self.calls >= self.max_calls"))
            added = _run([str(UV), "pip", "install", "-q", "--reinstall", "--no-deps",
                          "--python", python, str(src)], tmp_path, dict(os.environ))  # fmt: skip
            assert added.returncode == 0, added.stderr[-3000:]
            out = tmp_path / ("fixed" if fixed else "planted")
            extra = ["--mutation", "--no-peer"] if fixed else ["--no-fixes"]
            got = _run([*audit, *extra, "--out", str(out)], tmp_path, env)
            assert got.returncode == (0 if fixed else 1), got.stdout[-3000:] + got.stderr[-2000:]
            verdicts = json.loads((out / "toymeter-1.0/findings.json").read_text())["verdicts"]
            assert verdicts == ({"B1": "holds", "B2": "holds", "B3": "holds"} if fixed else
                                {**verdicts, "B3": "fails"}), verdicts  # fmt: skip
            if not fixed:
                _reruns_as_printed(out / "toymeter-1.0/findings.md", src, env)
        # exit 0 with --mutation: the gate passed; the shared suite killed the meter's mutants
        mutants = json.loads((out / "toymeter-1.0/mutation.json").read_text())["files"]
        statuses = [m["status"] for m in mutants["toymeter/meter.py"]["mutants"]]
        assert statuses and set(statuses) == {"Killed"}, statuses
    finally:
        _run([str(UV), "pip", "uninstall", "-q", "--python", python, "toymeter"], tmp_path,
             dict(os.environ))  # fmt: skip


def _reruns_as_printed(findings_md: Path, cwd: Path, env: dict[str, str]) -> None:
    """A new finding's rerun command, run as printed from the harness's folder, fails
    again; so do the replay commands of its example alone, the one that failure prints
    and the report's."""
    md = findings_md.read_text()
    reruns = [ln.split("Rerun: `", 1)[1].split("`")[0] for ln in md.splitlines()
              if "Rerun: `" in ln]  # fmt: skip
    assert reruns, md
    rerun = subprocess.run(["bash", "-c", reruns[0]], cwd=cwd, env=env, capture_output=True,
                           text=True, check=False)  # fmt: skip
    assert rerun.returncode == 1 and "1 failed" in rerun.stdout, rerun.stdout[-3000:]
    (replay,) = [ln.strip() for ln in rerun.stdout.splitlines() if "--replay=" in ln]
    (printed,) = [ln.split("`")[1] for ln in md.splitlines() if ln.startswith("Replay (")]
    for command in (replay, printed):  # the rerun's own, the report's
        again = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True,
                               text=True, check=False)  # fmt: skip
        assert again.returncode == 1 and "1 failed" in again.stdout, command + again.stdout[-3000:]
