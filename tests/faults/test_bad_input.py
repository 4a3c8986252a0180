"""Bad input is refused in one line (exit 2) before anything runs, and what the caller
gives means what it means in the caller's folder.

- ``bin/ctxaudit`` runs every command in the caller's folder: a relative ``--baseline``
  or test path is the caller's, not the checkout's.
- A home an installed ctxaudit cannot use (``CTXAUDIT_HOME`` a folder that cannot be
  made, a file, one whose files cannot be written) does not stop ``--version`` or
  ``--help``; a command that runs is refused, naming it, before anything runs. The
  installed build is this checkout's package copied to a folder with no checkout
  around it (its suites: one file; nothing here needs more).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = REPO / "bin" / "ctxaudit"


def run(cmd: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env={**os.environ, **env}, capture_output=True,
                          text=True, timeout=300, check=False)  # fmt: skip


@pytest.mark.fault("relative-path")
def test_relative_paths_mean_the_callers_folder(tmp_path: Path) -> None:
    (tmp_path / "mine.toml").write_text("this is [not toml\n")
    (tmp_path / "test_mine.py").write_text("def test_mine():\n    assert True\n")
    got = run([str(BIN), "audit", "--baseline", "mine.toml", "--out", "relout"], tmp_path)
    assert got.returncode == 2, got
    assert got.stderr.strip().splitlines() == [got.stderr.strip()], got.stderr
    assert "mine.toml: not TOML" in got.stderr, "the checkout's mine.toml was looked for"
    assert not (REPO / "relout").exists()
    got = run([str(BIN), "test", "test_mine.py", "-q", "-p", "no:cacheprovider"], tmp_path)
    assert got.returncode == 0 and "1 passed" in got.stdout, got.stdout[-2000:] + got.stderr


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """ctxaudit's package alone in a folder (no checkout around it), with suites to
    copy into its home."""
    site = tmp_path_factory.mktemp("site")
    shutil.copytree(REPO / "ctxaudit", site / "ctxaudit",
                    ignore=shutil.ignore_patterns("__pycache__", "_suite"))  # fmt: skip
    (site / "ctxaudit" / "_suite").mkdir()
    (site / "ctxaudit" / "_suite" / "README").write_text("the suites\n")
    return site


def homes(tmp: Path, site: Path) -> dict[str, Path]:
    a_file = tmp / "a-file"
    a_file.write_text("not a folder\n")
    full = tmp / "full"  # its copy of the suites made, then its .cache cannot be written
    made = run([sys.executable, "-P", "-c", "import ctxaudit.paths"], tmp,
               PYTHONPATH=str(site), CTXAUDIT_HOME=str(full))  # fmt: skip
    assert made.returncode == 0, made.stderr
    (root,) = full.glob("root-*")
    (root / ".cache").write_text("a file where the caches go\n")
    return {"cannot be made": Path("/sys/ctxaudit-home"), "a file": a_file, "unwritable": full}


@pytest.mark.fault("unusable-home")
@pytest.mark.parametrize("kind", ["cannot be made", "a file", "unwritable"])
def test_an_unusable_home_refuses_to_run_but_not_to_say_its_version(
    kind: str, installed: Path, tmp_path: Path
) -> None:
    home = homes(tmp_path, installed)[kind]
    env = {"PYTHONPATH": str(installed), "CTXAUDIT_HOME": str(home)}
    for flag in ("--version", "--help"):
        got = run([sys.executable, "-P", "-m", "ctxaudit", flag], tmp_path, **env)
        assert got.returncode == 0 and "Traceback" not in got.stderr, (flag, got.stderr)
        assert got.stdout.startswith("ctxaudit 0." if flag == "--version" else "usage:")
    check = "from ctxaudit import paths; assert not paths.IN_CHECKOUT; paths.require_home()"
    got = run([sys.executable, "-P", "-c", check], tmp_path, **env)
    assert got.returncode == 2, got.stderr
    (line,) = got.stderr.splitlines()
    assert line.startswith(f"ctxaudit: CTXAUDIT_HOME {home}"), line


@pytest.mark.fault("unusable-home")
def test_an_audit_with_an_unusable_home_stops_before_it_starts(
    installed: Path, tmp_path: Path
) -> None:
    env = {"PYTHONPATH": str(installed), "CTXAUDIT_HOME": "/sys/ctxaudit-home"}
    got = run([sys.executable, "-P", "-m", "ctxaudit", "audit", "--target", "ledger"],
              tmp_path, **env)  # fmt: skip
    assert got.returncode == 2
    (line,) = got.stderr.splitlines()
    assert line.startswith("ctxaudit: CTXAUDIT_HOME /sys/ctxaudit-home: cannot hold"), line
    assert not (tmp_path / "reports").exists()


@pytest.mark.fault("unusable-cache")
@pytest.mark.parametrize("kind", ["a file", "under a file", "cannot be made"])
def test_an_unusable_target_cache_stops_the_audit_before_it_starts(
    kind: str, tmp_path: Path
) -> None:
    """``CTXAUDIT_CACHE`` that cannot hold the targets' trees and environments: one line
    naming it, exit 2, before anything runs (never a traceback at a download's end)."""
    (tmp_path / "file").write_text("not a folder\n")
    cache = {"a file": tmp_path / "file", "under a file": tmp_path / "file" / "cache",
             "cannot be made": Path("/sys/ctxaudit-cache")}[kind]  # fmt: skip
    got = run([sys.executable, "-m", "ctxaudit", "audit", "--target", "ledger",
               "--out", str(tmp_path / "reports")], REPO, CTXAUDIT_CACHE=str(cache))  # fmt: skip
    assert got.returncode == 2, got.stderr
    (line,) = got.stderr.splitlines()
    assert line.startswith(f"ctxaudit: CTXAUDIT_CACHE {cache}: cannot hold the targets'"), line
    assert not (tmp_path / "reports").exists()


@pytest.mark.fault("unknown-version")
def test_an_unknown_release_is_a_short_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """pip lists every release it knows (langchain: 530, a 4.7 KB line); the error names
    the count and the newest few (issue #47, section 4)."""
    from types import SimpleNamespace

    from ctxaudit.targets import TargetError, get, uvenv

    listed = ", ".join(f"0.{n}.0" for n in range(400))
    stderr = (
        "ERROR: Could not find a version that satisfies the requirement langchain==9.9.9 "
        f"(from versions: {listed})\nERROR: No matching distribution found for langchain==9.9.9\n"
    )
    monkeypatch.setattr(
        uvenv, "run", lambda cmd, **kw: SimpleNamespace(returncode=1, stderr=stderr)
    )
    with pytest.raises(TargetError) as caught:
        get("langchain").resolve("langchain==9.9.9")
    said = str(caught.value)
    assert len(said) < 300, said
    assert said.endswith(
        "(from 400 versions, the newest 0.395.0, 0.396.0, 0.397.0, 0.398.0, 0.399.0))"
    ), said


@pytest.mark.fault("colliding-outputs")
@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--baseline", "bl.toml", "--junit-xml", "bl.toml"], "the same file as --baseline"),
        (["--sarif", "x", "--junit-xml", "x"], "--sarif"),
        (["--junit-xml", "out/matrix.md"], "a file the audit writes in --out"),
        (["--sarif", "out/timing/audit-time.md"], "a file the audit writes in --out"),
    ],
)
def test_outputs_that_collide_are_refused_before_work(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    says: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Nothing of the user's is overwritten: a baseline given as the JUnit file too was
    replaced by JUnit XML, and the next run failed (issue #47, section 3)."""
    from ctxaudit import cli

    monkeypatch.chdir(tmp_path)
    keep = '[[accepted]]\nid = "GR-V2-UNLIMITED-COMPACTS"\ntarget = "gitreins"\nwhy = "w"\n'
    (tmp_path / "bl.toml").write_text(keep)
    (tmp_path / "x").write_text("the user's\n")
    code = cli.main(["audit", "--target", "ledger", "--out", "out", *args])
    err = capsys.readouterr().err
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err
    assert (tmp_path / "bl.toml").read_text() == keep
    assert (tmp_path / "x").read_text() == "the user's\n"
    assert not (tmp_path / "out" / "matrix.md").exists()


@pytest.mark.fault("full-home")
def test_a_home_that_fills_up_is_a_short_line_and_leaves_no_half_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Copying an installed build's files into a full home fails on every file: the
    reason is the first one's and a count, and no half-copied ``root-*`` folder stays
    (issue #47, section 3: a 157 KB line and one such folder per attempt)."""
    import errno

    from ctxaudit import paths

    shipped = tmp_path / "shipped"
    (shipped / "tests").mkdir(parents=True)
    (shipped / "tests" / "a.py").write_text("")
    home = tmp_path / "home"
    monkeypatch.setattr(paths, "SHIPPED", shipped)
    monkeypatch.setenv("CTXAUDIT_HOME", str(home))

    def full(src: object, dst: Path, **kw: object) -> None:
        (Path(dst) / "partial").write_text("x")
        why = os.strerror(errno.ENOSPC)
        raise shutil.Error([(f"s{n}", f"{dst}/f{n}", f"[Errno 28] {why}") for n in range(3000)])

    monkeypatch.setattr(shutil, "copytree", full)
    with pytest.raises(OSError) as caught:
        paths._materialized()
    said = str(caught.value)
    assert len(said) < 300 and "and 2999 more file(s)" in said, said[:500]
    assert [p.name for p in home.iterdir()] == []
