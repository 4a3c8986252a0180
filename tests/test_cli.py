"""The audit command's usage errors: one clear line on stderr and exit code 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def audit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctxaudit", "audit", "--no-mutation", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--target", "gitreins==9.9.9"], "no published version '9.9.9'"),
        (["--target", "/no/such/tree"], "no such path '/no/such/tree'"),
        (["--target", "gitreinz==0.14.0"], "target 'gitreinz==0.14.0'"),
        (["--target", "gitreins==abc"], "'abc' is not a version number"),
        (["--target", str(ROOT)], "is not a gitreins source tree"),
        (["--target", "gitreins>=99"], "no published gitreins version matches"),
        (["--profile", "fast"], "invalid choice: 'fast'"),
        (["--jobs", "0"], "--jobs must be at least 1"),
        (["--other-sample", "1.5"], "--other-sample must be in (0, 1]"),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(args: list[str], says: str) -> None:
    proc = audit(*args)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


def _git_repo(path: Path) -> Path:
    """A tiny git repository (not lightspeed-stack) with one commit and tag 0.1.0."""
    path.mkdir()
    for cmd in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty",
         "-m", "first"],
        ["git", "tag", "0.1.0"],
    ):  # fmt: skip
        subprocess.run(cmd, cwd=path, check=True, capture_output=True)
    return path


@pytest.mark.parametrize(
    ("target", "repo", "says"),
    [
        ("lightspeed-stack==0.6.2", None, "--lightspeed-repo=PATH"),
        ("lightspeed-stack==0.6.2", "missing", "does not exist"),
        ("lightspeed-stack==9.9.9", "git", "no tag '9.9.9'"),
        ("lightspeed-stack@deadbeef", "git", "no commit, branch or tag 'deadbeef'"),
        ("lightspeed-stack==0.1.0", "git", "is not a lightspeed-stack tree"),
        ("lightspeed-stack>=5.0", "git", "no tag in"),
    ],
)
def test_lightspeed_target_errors_are_one_line_and_exit_2(
    target: str, repo: str | None, says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CTXAUDIT_LIGHTSPEED_REPO", raising=False)
    monkeypatch.setenv("CTXAUDIT_CACHE", str(tmp_path / "cache"))
    args = ["--target", target]
    if repo == "missing":
        args += ["--lightspeed-repo", str(tmp_path / "nowhere")]
    elif repo == "git":
        args += ["--lightspeed-repo", str(_git_repo(tmp_path / "repo"))]
    proc = audit(*args)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], proc.stderr
