"""ctxaudit.targets.lightspeed.tree and .env on tiny repositories.

The tree tests run real ``git`` on a repository built here: 0.5.0 (before
compaction), 0.6.0 (annotated tag), 0.6.1 on branch release/0.6, 0.7.0rc1 and
an untagged head on main, and an orphan branch ``docs`` that is no
lightspeed-stack. The env tests replace uv with a fake that lays out the files
a real build leaves, so no environment is really built.
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

from ctxaudit.paths import REPO_ROOT
from ctxaudit.targets.lightspeed import env as lsenv
from ctxaudit.targets.lightspeed import tree as lstree
from ctxaudit.targets.lightspeed.env import EnvError, LightspeedEnv
from ctxaudit.targets.lightspeed.tree import LightspeedTree, TargetError

NO_COMPACTION = (
    "no src/utils/conversation_compaction.py; compaction came with LCORE-1572 on 2026-06-09"
)


def git(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_AUTHOR_DATE="2026-07-01T12:00:00+02:00", GIT_COMMITTER_DATE="2026-07-01T12:00:00+02:00"
    )
    proc = subprocess.run(
        ["git", "-C", str(cwd), "-c", "user.name=t", "-c", "user.email=t@example.com",
         "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false", *args],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    return proc.stdout.strip()


def write_tree(
    root: Path, version: str, *, compaction: bool = True, name: str = "lightspeed-stack"
) -> None:
    """The files tree.py looks at, laid out as lightspeed-stack does (pdm version file)."""
    (root / "src/app/endpoints").mkdir(parents=True, exist_ok=True)
    (root / "src/utils").mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(
        f'[project]\nname = "{name}"\ndynamic = ["version"]\n\n'
        '[tool.pdm.version]\nsource = "file"\npath = "src/version.py"\n'
    )
    (root / "src/version.py").write_text(f'__version__ = "{version}"\n')
    (root / "src/app/endpoints/query.py").write_text("# query endpoint\n")
    (root / "uv.lock").write_text(f"version = 1\n# lock of {version}\n")
    compaction_file = root / "src/utils/conversation_compaction.py"
    if compaction:
        compaction_file.write_text("# compaction\n")
    elif compaction_file.exists():
        compaction_file.unlink()


def commit(root: Path, message: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD")


@pytest.fixture(scope="session")
def origin(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Builds the repository; returns its path and the commits by name."""
    root = tmp_path_factory.mktemp("origin")
    git(root, "init", "-q", "-b", "main")
    shas: dict[str, str] = {"path": str(root)}
    write_tree(root, "0.5.0", compaction=False)
    shas["0.5.0"] = commit(root, "0.5.0")
    git(root, "tag", "0.5.0")
    write_tree(root, "0.6.0")
    shas["0.6.0"] = commit(root, "0.6.0: compaction")
    git(root, "tag", "-a", "-m", "release 0.6.0", "0.6.0")
    git(root, "checkout", "-q", "-b", "release/0.6")
    write_tree(root, "0.6.1")
    shas["0.6.1"] = commit(root, "0.6.1")
    git(root, "tag", "0.6.1")
    git(root, "checkout", "-q", "main")
    write_tree(root, "0.7.0rc1")
    shas["0.7.0rc1"] = commit(root, "0.7.0rc1")
    git(root, "tag", "0.7.0rc1")
    (root / "src/app/endpoints/query.py").write_text("# query endpoint, newer\n")
    shas["main"] = commit(root, "work after 0.7.0rc1")
    git(root, "checkout", "-q", "--orphan", "docs")
    git(root, "rm", "-q", "-rf", ".")
    (root / "README.md").write_text("docs only\n")
    shas["docs"] = commit(root, "docs")
    git(root, "checkout", "-q", "-f", "main")
    return shas


@pytest.fixture
def repo(origin: dict[str, str]) -> Path:
    return Path(origin["path"])


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CTXAUDIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(lstree.REPO_ENV, raising=False)
    return tmp_path / "cache" / "lightspeed"


@pytest.fixture
def git_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, ...]]]:
    """Every git command tree.py runs (through _git), as it runs them."""
    calls: list[tuple[str, ...]] = []
    real = lstree._git

    def spy(*args: str) -> subprocess.CompletedProcess[str]:
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(lstree, "_git", spy)
    yield calls


def ran(calls: list[tuple[str, ...]], command: str) -> int:
    return sum(1 for args in calls if command in args)


def one_line(exc: pytest.ExceptionInfo[TargetError]) -> str:
    message = str(exc.value)
    assert "\n" not in message
    assert message.startswith("lightspeed-stack: ")
    return message


# ------------------------------------------------------------------ repo_from


def test_repo_from_option_then_env_var(monkeypatch: pytest.MonkeyPatch) -> None:
    assert lstree.repo_from(None) is None
    assert lstree.repo_from("  ") is None
    monkeypatch.setenv(lstree.REPO_ENV, "/from/env")
    assert lstree.repo_from(None) == Path("/from/env")
    assert lstree.repo_from("/from/option") == Path("/from/option")


# ------------------------------------------------------------------ resolve


def test_main_head_is_the_default(repo: Path, origin: dict[str, str], cache: Path) -> None:
    for spec in ("", "lightspeed-stack", None):
        tree = lstree.resolve(spec, repo)
        assert tree.commit == origin["main"]
        assert tree.origin == "rev"
        assert tree.tag is None
        assert tree.version == "0.7.0rc1"  # what src/version.py declares
        assert tree.label == f"lightspeed-stack-g{origin['main'][:12]}"
        assert tree.commit_date == "2026-07-01T12:00:00+02:00"
        assert tree.root == cache / "trees" / origin["main"]
        assert (tree.root / "src/app/endpoints/query.py").read_text() == "# query endpoint, newer\n"
        assert not (tree.root / ".git").exists()


def test_tag(repo: Path, origin: dict[str, str]) -> None:
    tree = lstree.resolve("lightspeed-stack==0.6.0", repo)  # an annotated tag: its commit
    assert (tree.commit, tree.tag, tree.origin) == (origin["0.6.0"], "0.6.0", "tag")
    assert tree.version == "0.6.0"
    assert tree.label == "lightspeed-stack-0.6.0"
    assert tree.spec == "lightspeed-stack==0.6.0"


def test_revs_short_sha_branch_and_tagged_commit(repo: Path, origin: dict[str, str]) -> None:
    short = lstree.resolve(f"lightspeed-stack@{origin['main'][:7]}", repo)
    assert short.commit == origin["main"]
    branch = lstree.resolve("lightspeed-stack@release/0.6", repo)
    assert branch.commit == origin["0.6.1"]
    assert branch.origin == "rev"
    assert branch.tag == "0.6.1"  # a rev on a tagged commit is labelled by its tag
    assert branch.label == "lightspeed-stack-0.6.1"


def test_remote_branches_of_a_clone_resolve(
    repo: Path, origin: dict[str, str], tmp_path: Path
) -> None:
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))  # release/0.6 is only origin/release/0.6
    assert lstree.resolve("lightspeed-stack@release/0.6", clone).commit == origin["0.6.1"]
    assert lstree.resolve("lightspeed-stack@main", clone).commit == origin["main"]
    assert lstree.resolve("lightspeed-stack@HEAD", clone).commit == origin["main"]
    assert lstree.resolve("lightspeed-stack==0.6.0", clone).commit == origin["0.6.0"]


def test_a_bundle_is_a_repository(repo: Path, origin: dict[str, str], tmp_path: Path) -> None:
    bundle = tmp_path / "ls.bundle"
    git(repo, "bundle", "create", "-q", str(bundle), "--all")
    assert lstree.resolve("", bundle).commit == origin["main"]
    assert lstree.resolve("lightspeed-stack@release/0.6", bundle).commit == origin["0.6.1"]


def test_range_is_every_matching_tag_by_version(repo: Path) -> None:
    def tags(spec: str) -> list[str | None]:
        return [t.tag for t in lstree.resolve_many(spec, repo)]

    assert tags("lightspeed-stack>=0.6.0") == ["0.6.0", "0.6.1", "0.7.0rc1"]
    assert tags("lightspeed-stack>=0.6.0,<0.7") == ["0.6.0", "0.6.1"]  # not 0.7.0rc1
    assert tags("lightspeed-stack >= 0.6.0, < 0.7.0rc2") == ["0.6.0", "0.6.1", "0.7.0rc1"]
    assert tags("lightspeed-stack>0.6.0,<=0.6.1") == ["0.6.1"]
    assert tags("lightspeed-stack==0.6.*") == ["0.6.0", "0.6.1"]
    trees = lstree.resolve_many("lightspeed-stack>=0.6.1", repo)
    assert [(t.spec, t.origin) for t in trees] == [
        ("lightspeed-stack==0.6.1", "tag"),
        ("lightspeed-stack==0.7.0rc1", "tag"),
    ]
    assert [t.tag for t in lstree.resolve_many("lightspeed-stack==0.6.0", repo)] == ["0.6.0"]


def test_range_leaves_out_tags_without_compaction(repo: Path) -> None:
    heard: list[str] = []
    trees = lstree.resolve_many("lightspeed-stack>=0.5.0,<0.7", repo, log=heard.append)
    assert [t.tag for t in trees] == ["0.6.0", "0.6.1"]
    assert heard == ["lightspeed-stack: left out 0.5.0 (no conversation compaction)"]


def test_mirror_fetches_only_when_the_source_changed(
    repo: Path, origin: dict[str, str], tmp_path: Path, git_calls: list[tuple[str, ...]]
) -> None:
    source = tmp_path / "source"
    git(tmp_path, "clone", "-q", "--mirror", str(repo), str(source))
    lstree.resolve("lightspeed-stack==0.6.0", source)
    lstree.resolve("lightspeed-stack==0.6.1", source)
    assert ran(git_calls, "fetch") == 1
    git(source, "tag", "0.6.2", origin["0.6.1"])
    git(source, "branch", "release/0.8", origin["main"])
    tree = lstree.resolve("lightspeed-stack==0.6.2", source)
    assert ran(git_calls, "fetch") == 2
    assert (tree.commit, tree.label) == (origin["0.6.1"], "lightspeed-stack-0.6.2")
    assert lstree.resolve("lightspeed-stack@release/0.8", source).commit == origin["main"]


def test_checkout_is_extracted_once(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = lstree.resolve("lightspeed-stack==0.6.0", repo)
    extractions: list[object] = []
    real_popen = subprocess.Popen

    def counting_popen(cmd: list[str], **kwargs: object) -> object:
        if "archive" in cmd:
            extractions.append(cmd)
        return real_popen(cmd, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(subprocess, "Popen", counting_popen)
    second = lstree.resolve("lightspeed-stack==0.6.0", repo)
    assert second.root == first.root
    assert extractions == []
    assert [p.name for p in first.root.parent.iterdir()] == [first.commit]  # no temp dirs left


def test_a_working_tree_is_used_in_place(
    repo: Path, origin: dict[str, str], tmp_path: Path
) -> None:
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(repo), str(work))
    tree = lstree.resolve(str(work), None)  # no repository needed for a path
    assert (tree.root, tree.origin, tree.commit, tree.dirty) == (
        work,
        "path",
        origin["main"],
        False,
    )
    assert tree.label == f"lightspeed-stack-0.7.0rc1+{origin['main'][:7]}"
    assert tree.commit_date == "2026-07-01T12:00:00+02:00"
    (work / "src/app/endpoints/query.py").write_text("# edited\n")
    dirty = lstree.resolve(str(work), None)
    assert dirty.dirty
    assert dirty.label == f"lightspeed-stack-0.7.0rc1+{origin['main'][:7]}-dirty"
    plain = tmp_path / "plain"
    shutil.copytree(work, plain, ignore=shutil.ignore_patterns(".git"))
    untracked = lstree.resolve(str(plain), None)
    assert (untracked.commit, untracked.commit_date, untracked.label) == (
        None,
        None,
        "lightspeed-stack-0.7.0rc1+local",
    )


# ------------------------------------------------------------------ errors, one line each


def test_error_no_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(TargetError) as exc:
        lstree.resolve("", lstree.repo_from(None))
    assert one_line(exc) == (
        "lightspeed-stack: no repository given; pass --lightspeed-repo=PATH or set "
        "CTXAUDIT_LIGHTSPEED_REPO (a git clone, bundle or working tree of lightspeed-stack)"
    )


def test_error_repository_does_not_exist(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(TargetError) as exc:
        lstree.resolve("lightspeed-stack==0.6.0", missing)
    assert one_line(exc) == f"lightspeed-stack: the repository {str(missing)!r} does not exist"


@pytest.mark.parametrize("kind", ["folder", "file"])
def test_error_not_a_repository_or_bundle(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "not-a-repo"
    if kind == "folder":
        path.mkdir()
    else:
        path.write_text("# v2 git bundle? no\n")
    with pytest.raises(TargetError) as exc:
        lstree.resolve("", path)
    assert one_line(exc).startswith(
        f"lightspeed-stack: {str(path)!r} is not a git repository or bundle ("
    )


def test_error_unknown_tag(repo: Path) -> None:
    with pytest.raises(TargetError) as exc:
        lstree.resolve("lightspeed-stack==0.9.9", repo)
    assert one_line(exc) == (
        f"lightspeed-stack: no tag '0.9.9' in {str(repo)!r} (newest: 0.7.0rc1, 0.6.1, 0.6.0)"
    )


def test_error_unknown_rev(repo: Path) -> None:
    with pytest.raises(TargetError) as exc:
        lstree.resolve("lightspeed-stack@release/9.9", repo)
    assert one_line(exc) == (
        f"lightspeed-stack: no commit, branch or tag 'release/9.9' in {str(repo)!r}"
    )


def test_error_range_matches_no_tag(repo: Path) -> None:
    with pytest.raises(TargetError) as exc:
        lstree.resolve_many("lightspeed-stack>=1.0", repo)
    assert one_line(exc) == f"lightspeed-stack: no tag in {str(repo)!r} matches '>=1.0'"


def test_error_range_given_to_resolve(repo: Path) -> None:
    with pytest.raises(TargetError) as exc:
        lstree.resolve("lightspeed-stack>=0.6.0", repo)
    assert one_line(exc) == (
        "lightspeed-stack: 'lightspeed-stack>=0.6.0' is a range; give one version (==TAG) or @REV"
    )


def test_error_not_lightspeed_stack(repo: Path, origin: dict[str, str], tmp_path: Path) -> None:
    with pytest.raises(TargetError) as exc:
        lstree.resolve("lightspeed-stack@docs", repo)
    assert one_line(exc) == (
        f"lightspeed-stack: docs ({origin['docs'][:12]}) is not a lightspeed-stack tree "
        "(no src/app/endpoints/query.py)"
    )
    other = tmp_path / "other"
    write_tree(other, "1.0", name="other-service")
    with pytest.raises(TargetError) as exc:
        lstree.resolve(str(other), None)
    assert one_line(exc) == (
        f"lightspeed-stack: {str(other)!r} is not a lightspeed-stack tree "
        "(its pyproject.toml names 'other-service')"
    )
    (other / "pyproject.toml").unlink()
    with pytest.raises(TargetError) as exc:
        lstree.resolve(str(other), None)
    assert one_line(exc).endswith("is not a lightspeed-stack tree (no readable pyproject.toml)")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(TargetError) as exc:
        lstree.resolve(str(empty), None)
    assert one_line(exc) == (
        f"lightspeed-stack: {str(empty)!r} is not a lightspeed-stack tree "
        "(no src/app/endpoints/query.py)"
    )


def test_error_no_compaction(repo: Path, tmp_path: Path) -> None:
    with pytest.raises(TargetError) as exc:
        lstree.resolve("lightspeed-stack==0.5.0", repo)
    assert one_line(exc) == (
        f"lightspeed-stack: tag 0.5.0 has no conversation compaction ({NO_COMPACTION})"
    )
    old = tmp_path / "old"
    write_tree(old, "0.5.0", compaction=False)
    with pytest.raises(TargetError) as exc:
        lstree.resolve(str(old), None)
    assert one_line(exc) == (
        f"lightspeed-stack: {str(old)!r} has no conversation compaction ({NO_COMPACTION})"
    )
    with pytest.raises(TargetError) as exc:
        lstree.resolve_many("lightspeed-stack<0.6", repo)
    assert one_line(exc) == (
        f"lightspeed-stack: no tag matching '<0.6' has conversation compaction ({NO_COMPACTION})"
    )


@pytest.mark.parametrize(
    "spec",
    [
        "lightspeed-stack@",
        "lightspeed-stack@-x",
        "lightspeed-stack==",
        "lightspeed-stack>=banana",
        "lightspeed-stack=>0.6",
        "lightspeed-stackish",
        "no/such/tree",
    ],
)
def test_error_malformed_spec(repo: Path, spec: str) -> None:
    with pytest.raises(TargetError) as exc:
        lstree.resolve_many(spec, repo)
    assert one_line(exc) == (
        f"lightspeed-stack: {spec!r} is not a spec (lightspeed-stack, lightspeed-stack==TAG, "
        "lightspeed-stack@REV, a range like lightspeed-stack>=0.6.0,<0.7) nor an existing path"
    )


# ------------------------------------------------------------------ env: python 3.12, uv, pins


def fake_python(path: Path, version: str, *, works: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = (
        f'echo "$0"\necho {version}\n' if works else "echo 'pyenv: no such command' >&2\nexit 127\n"
    )
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def test_find_python312_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    fake_python(bin_dir / "python3.12", "3.12", works=False)  # a pyenv shim that fails
    pyenv = tmp_path / "pyenv"
    fake_python(pyenv / "versions/3.12.1/bin/python3.12", "3.12")
    best = fake_python(pyenv / "versions/3.12.10/bin/python3.12", "3.12")
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("PYENV_ROOT", str(pyenv))
    monkeypatch.delenv(lsenv.PYTHON_ENV, raising=False)
    assert lsenv.find_python312() == best
    on_path = fake_python(bin_dir / "python3.12", "3.12")
    assert lsenv.find_python312() == on_path
    chosen = fake_python(tmp_path / "mine/python", "3.12")
    monkeypatch.setenv(lsenv.PYTHON_ENV, str(chosen))
    assert lsenv.find_python312() == chosen


def test_error_python312_env_var_is_not_312(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = fake_python(tmp_path / "python3.11", "3.11")
    monkeypatch.setenv(lsenv.PYTHON_ENV, str(wrong))
    with pytest.raises(EnvError) as exc:
        lsenv.find_python312()
    assert one_line(exc) == (
        f"lightspeed-stack: CTXAUDIT_PYTHON312={str(wrong)!r} is not a Python 3.12 interpreter"
    )


def test_error_no_python312(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    monkeypatch.delenv(lsenv.PYTHON_ENV, raising=False)
    with pytest.raises(EnvError) as exc:
        lsenv.find_python312()
    assert one_line(exc) == (
        f"lightspeed-stack: no Python 3.12 found (python3.12 on PATH, {tmp_path}/pyenv/versions/"
        "3.12*); install one (`pyenv install 3.12`, or put python3.12 on PATH) or set "
        "CTXAUDIT_PYTHON312"
    )


def test_error_no_uv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "bin/python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(EnvError) as exc:
        lsenv.find_uv()
    assert one_line(exc).startswith(f"lightspeed-stack: uv not found (beside {tmp_path}/bin/python")


def test_test_pins_come_from_requirements_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lock_lines = lsenv.REQUIREMENTS_LOCK.read_text().splitlines()
    pins = lsenv.test_pins()
    assert [p.split("==")[0] for p in pins] == ["hypothesis", "pytest", "coverage"]
    assert all(p in lock_lines for p in pins)
    other = tmp_path / "requirements.lock"
    other.write_text("attrs==1\nHypothesis == 1.2.3\npytest-cov==7\n")
    monkeypatch.setattr(lsenv, "REQUIREMENTS_LOCK", other)
    with pytest.raises(EnvError) as exc:
        lsenv.test_pins()
    assert one_line(exc) == f"lightspeed-stack: {other} pins no pytest, coverage"
    other.write_text("Hypothesis == 1.2.3\npytest==9.0 ; python_version >= '3'\ncoverage==7.1\n")
    assert lsenv.test_pins() == ["Hypothesis==1.2.3", "pytest==9.0", "coverage==7.1"]


def a_tree(root: Path, lock: str = "version = 1\n") -> LightspeedTree:
    root.mkdir(parents=True, exist_ok=True)
    (root / "uv.lock").write_text(lock)
    return LightspeedTree(
        spec="lightspeed-stack==0.6.0",
        commit="a" * 40,
        root=root,
        version="0.6.0",
        tag="0.6.0",
        origin="tag",
        commit_date="2026-07-01T12:00:00+02:00",
    )


def test_lock_hash_follows_the_lock_and_the_pins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one = lsenv.lock_hash(a_tree(tmp_path / "one"))
    assert len(one) == 16 and int(one, 16) >= 0
    assert lsenv.lock_hash(a_tree(tmp_path / "same")) == one
    assert lsenv.lock_hash(a_tree(tmp_path / "other", "version = 2\n")) != one
    monkeypatch.setattr(lsenv, "test_pins", lambda: ["hypothesis==1", "pytest==2"])
    assert lsenv.lock_hash(a_tree(tmp_path / "one")) != one


def test_error_tree_without_uv_lock(tmp_path: Path) -> None:
    tree = a_tree(tmp_path / "t")
    (tree.root / "uv.lock").unlink()
    with pytest.raises(EnvError) as exc:
        lsenv.lock_hash(tree)
    assert one_line(exc) == (
        f"lightspeed-stack: lightspeed-stack-0.6.0 has no readable uv.lock ({tree.root}/uv.lock)"
    )


# ------------------------------------------------------------------ env: ensure_env with a fake uv


class FakeUv:
    """Stands in for env._run: lays out what uv would, or fails at one step."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.fail: dict[str, str] = {}  # step word -> stderr
        self.tables = True

    def __call__(self, cmd: list[str], cwd: Path | None) -> subprocess.CompletedProcess[str]:
        self.calls.append(cmd)
        step = "pins" if "-c" in cmd else cmd[1] if cmd[1] != "pip" else "install"
        if step in self.fail:
            return subprocess.CompletedProcess(cmd, 1, "", self.fail[step])
        if step == "export":
            Path(cmd[cmd.index("-o") + 1]).write_text("fastapi==1.0 \\\n    --hash=sha256:00\n")
        elif step == "venv":
            venv = Path(cmd[-1])
            (venv / "bin").mkdir(parents=True)
            (venv / "bin/python").write_text("")
            (venv / "lib/python3.12/site-packages").mkdir(parents=True)
        elif step == "install":
            venv = Path(cmd[cmd.index("--python") + 1]).parents[1]
            tables = venv / "lib/python3.12/site-packages" / lsenv.TOKENIZERS
            tables.mkdir(parents=True)
            if self.tables:
                (tables / lsenv.CL100K).write_text("Y2w= 0\n")
        return subprocess.CompletedProcess(cmd, 0, "", "")


@pytest.fixture
def fake_uv(monkeypatch: pytest.MonkeyPatch) -> FakeUv:
    fake = FakeUv()
    monkeypatch.setattr(lsenv, "_run", fake)
    monkeypatch.setattr(lsenv, "find_uv", lambda: Path("/fake/uv"))
    monkeypatch.setattr(lsenv, "find_python312", lambda: Path("/fake/python3.12"))
    return fake


def test_ensure_env_builds_once_then_reuses(tmp_path: Path, fake_uv: FakeUv, cache: Path) -> None:
    tree = a_tree(tmp_path / "tree")
    heard: list[str] = []
    env = lsenv.ensure_env(tree, log=heard.append)
    key = lsenv.lock_hash(tree)
    root = cache / "envs" / key
    assert env.root == root
    assert env.python == root / "venv/bin/python"
    assert env.lock_hash == key
    assert env.build_seconds is not None and env.build_seconds >= 0
    assert env.size_bytes > 0
    assert env.tiktoken_dir == root / "venv/lib/python3.12/site-packages" / lsenv.TOKENIZERS
    assert lsenv.tiktoken_cache_dir(env) == env.tiktoken_dir
    stamp = json.loads((root / lsenv.STAMP).read_text())
    assert (stamp["lock_hash"], stamp["size_bytes"]) == (key, env.size_bytes)
    assert stamp["build_seconds"] == env.build_seconds
    assert (root / "build.log").is_file() and (root / "requirements.txt").is_file()
    assert sorted(p.name for p in (cache / "envs").iterdir()) == [key, f"{key}.lock"]
    assert heard[0].startswith(f"lightspeed-stack: building the Python 3.12 environment {key}")

    pins = lsenv.test_pins()
    export, constraints, venv, install, test_pins = fake_uv.calls
    assert export[:8] == ["/fake/uv", "export", "--quiet", "--frozen", "--no-dev",
                          "--no-default-groups", "--no-emit-project", "--no-header"]  # fmt: skip
    assert "--no-hashes" in constraints
    assert venv[:2] == ["/fake/uv", "venv"] and venv[-3:-1] == ["-p", "/fake/python3.12"]
    assert install[1:3] == ["pip", "install"] and "--require-hashes" in install
    assert install[install.index("-r") + 1].endswith("requirements.txt")
    assert test_pins[-3:] == pins and "--require-hashes" not in test_pins

    again = lsenv.ensure_env(tree)
    assert again.build_seconds is None
    assert (again.root, again.size_bytes) == (env.root, env.size_bytes)
    assert len(fake_uv.calls) == 5  # nothing ran


def test_the_peer_environment_adds_the_trees_test_group_and_its_own_pins(
    tmp_path: Path, fake_uv: FakeUv, cache: Path
) -> None:
    """The tree's own tests (its dev group: pytest-asyncio, pytest-mock ...) run in an
    environment of their own, never the one ctxaudit's suites run in; the tree's lock
    decides the versions of what it pins (its pytest), ctxaudit's test pins the rest.
    Seen failing with --no-dev kept beside --group dev (uv then leaves the group out:
    the real tree's peer environment had no pytest)."""
    tree = a_tree(
        tmp_path / "tree", 'version = 1\n[[package]]\nname = "PyTest"\nversion = "8.4.0"\n'
    )
    plain = lsenv.ensure_env(tree)
    heard: list[str] = []
    peer = lsenv.ensure_env(tree, peer=True, log=heard.append)
    assert peer.lock_hash == lsenv.lock_hash(tree, peer=True) != plain.lock_hash
    assert peer.root != plain.root
    assert json.loads((peer.root / lsenv.STAMP).read_text())["peer"] == "dev"
    assert heard[0].endswith(f"for {tree.label} (its own tests)"), heard
    export, constraints, _venv, _install, pins = fake_uv.calls[5:]
    for cmd in (export, constraints):
        assert "--no-dev" not in cmd
        assert cmd[cmd.index("--group") + 1] == "dev" and "--no-default-groups" in cmd
    wanted = [p for p in lsenv.test_pins() if not p.startswith("pytest==")]
    assert wanted and pins[-len(wanted) :] == wanted
    assert not any(a.startswith("pytest==") for a in pins)


def test_half_built_env_is_rebuilt(tmp_path: Path, fake_uv: FakeUv, cache: Path) -> None:
    tree = a_tree(tmp_path / "tree")
    half = cache / "envs" / lsenv.lock_hash(tree)
    (half / "venv/bin").mkdir(parents=True)
    (half / "venv/bin/python").write_text("")  # no stamp
    stale = half.parent / f".tmp-{half.name}-killed"
    stale.mkdir()
    env = lsenv.ensure_env(tree)
    assert env.build_seconds is not None
    assert (half / lsenv.STAMP).is_file()
    assert not stale.exists()


@pytest.mark.parametrize(
    ("step", "stderr", "reason"),
    [
        (
            "install",
            "Resolved 3 packages in 1ms\n  × Failed to build `psycopg2==2.9.10`\n"
            "  ├─▶ The build backend returned an error\n"
            "  ╰─▶ Call to `setuptools.build_meta.build_wheel` failed (exit status: 1)\n"
            "      hint: This usually indicates a problem with the package\n",
            "package psycopg2==2.9.10: Failed to build `psycopg2==2.9.10`",
        ),
        (
            "pins",
            "  × No solution found when resolving dependencies:\n"
            "  ╰─▶ Because there is no version of pytest==99.0 and you require pytest==99.0, "
            "we can conclude that your requirements are unsatisfiable.\n",
            "package pytest==99.0: Because there is no version of pytest==99.0 and you require",
        ),
        (
            "install",
            "error: Hash mismatch for `idna==3.10`\n\nExpected:\n  sha256:00\n",
            "package idna==3.10: Hash mismatch for `idna==3.10`",
        ),
        (
            "venv",
            "error: Failed to inspect Python interpreter\n  Caused by: permission denied\n",
            "permission denied",
        ),
    ],
)
def test_error_build_fails_names_the_package(
    tmp_path: Path, fake_uv: FakeUv, cache: Path, step: str, stderr: str, reason: str
) -> None:
    tree = a_tree(tmp_path / "tree")
    fake_uv.fail[step] = stderr
    log = cache / "envs" / lsenv.lock_hash(tree) / "build.log"
    with pytest.raises(EnvError) as exc:
        lsenv.ensure_env(tree)
    message = one_line(exc)
    assert message.startswith(
        "lightspeed-stack: building the environment for lightspeed-stack-0.6.0 failed at uv "
    )
    assert reason in message
    assert message.endswith(f"(full log: {log})")
    assert stderr in log.read_text()
    assert not (log.parent / lsenv.STAMP).exists()
    assert [p.name for p in log.parent.iterdir()] == ["build.log"]
    assert not [p for p in log.parent.parent.iterdir() if p.name.startswith(".tmp-")]
    del fake_uv.fail[step]
    assert lsenv.ensure_env(tree).build_seconds is not None  # the failed one is rebuilt


def test_error_export_fails(tmp_path: Path, fake_uv: FakeUv, cache: Path) -> None:
    tree = a_tree(tmp_path / "tree")
    fake_uv.fail["export"] = "error: Failed to parse `uv.lock`\n  Caused by: TOML parse error\n"
    with pytest.raises(EnvError) as exc:
        lsenv.ensure_env(tree)
    assert one_line(exc).startswith(
        "lightspeed-stack: building the environment for lightspeed-stack-0.6.0 failed at uv "
        "export: TOML parse error (full log: "
    )


def test_error_env_without_tiktoken_tables(tmp_path: Path, fake_uv: FakeUv) -> None:
    fake_uv.tables = False
    with pytest.raises(EnvError) as exc:
        lsenv.ensure_env(a_tree(tmp_path / "tree"))
    assert one_line(exc).endswith(f"has no cl100k_base table ({lsenv.CL100K})")
    venv = tmp_path / "venv"
    (venv / "lib/python3.12/site-packages").mkdir(parents=True)
    env = LightspeedEnv(venv.parent, venv / "bin/python", "0" * 16, None, 0, tmp_path)
    with pytest.raises(EnvError) as exc:
        lsenv.tiktoken_cache_dir(env)
    assert one_line(exc) == (
        f"lightspeed-stack: {venv} has no litellm tokenizer tables ({lsenv.TOKENIZERS}); "
        "tiktoken would download them and fails offline"
    )


def test_child_environ(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTPS_PROXY", "http_proxy", "ALL_PROXY", "PYTHONPATH", "OPENAI_BASE_URL",
                 "PYTHONDONTWRITEBYTECODE"):  # fmt: skip
        monkeypatch.setenv(name, "x")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real")
    monkeypatch.setenv("KEEP_ME", "1")
    tree = a_tree(tmp_path / "tree")
    root = tmp_path / "envs/abc"
    env = LightspeedEnv(root, root / "venv/bin/python", "abc", None, 1, tmp_path / "tables")
    child = lsenv.child_environ(env, tree)
    assert child["TIKTOKEN_CACHE_DIR"] == str(tmp_path / "tables")
    assert child["PYTHONPATH"] == os.pathsep.join([str(tree.root / "src"), str(REPO_ROOT)])
    assert (REPO_ROOT / "ctxaudit").is_dir() and (REPO_ROOT / "model").is_dir()
    assert child["PATH"].split(os.pathsep)[0] == str(root / "venv/bin")
    assert child["VIRTUAL_ENV"] == str(root / "venv")
    assert child["OPENAI_API_KEY"] != "sk-real"
    assert "PYTHONDONTWRITEBYTECODE" not in child  # bytecode is kept, in the env's folder
    assert child["PYTHONPYCACHEPREFIX"] == str(root / "pycache")
    for name, value in [("HF_HUB_OFFLINE", "1"),
                        ("TRANSFORMERS_OFFLINE", "1"), ("KEEP_ME", "1")]:  # fmt: skip
        assert child[name] == value
    assert not [k for k in child if k.lower().endswith("_proxy")]
    assert "OPENAI_BASE_URL" not in child
