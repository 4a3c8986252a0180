"""Fetching gitreins' sdist for the peer comparison, against a local file:// index."""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path

import pytest

from ctxaudit.targets.gitreins import sdist as gitreins_sdist
from ctxaudit.targets.gitreins.tree import GitreinsTree, TargetError


def _sdist(version: str, with_tests: bool = True) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        files = {f"gitreins-{version}/PKG-INFO": f"Version: {version}\n"}
        if with_tests:
            files[f"gitreins-{version}/tests/test_x.py"] = "def test_x():\n    pass\n"
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "simple"
    (root / "gitreins").mkdir(parents=True)
    monkeypatch.setenv("PIP_INDEX_URL", root.as_uri())
    monkeypatch.setattr(gitreins_sdist, "SDIST_CACHE", tmp_path / "cache")
    return root


def _publish(index: Path, version: str, data: bytes, digest: str | None = None) -> None:
    name = f"gitreins-{version}.tar.gz"
    (index / "gitreins" / name).write_bytes(data)
    sha = digest or hashlib.sha256(data).hexdigest()
    (index / "gitreins" / "index.html").write_text(
        f'<html><body><a href="{name}#sha256={sha}">{name}</a></body></html>'
    )


def test_fetches_checks_and_unpacks_the_sdist(index: Path):
    _publish(index, "1.2.3", _sdist("1.2.3"))
    root = gitreins_sdist.download_sdist("1.2.3")
    assert (root / "tests" / "test_x.py").is_file()
    assert gitreins_sdist.download_sdist("1.2.3") == root  # cached


def test_a_tampered_sdist_is_refused(index: Path):
    _publish(index, "1.2.3", _sdist("1.2.3"), digest="0" * 64)
    with pytest.raises(TargetError, match="does not match its sha256"):
        gitreins_sdist.download_sdist("1.2.3")


def test_missing_version_and_missing_tests_are_one_line_errors(index: Path):
    _publish(index, "1.2.3", _sdist("1.2.3", with_tests=False))
    with pytest.raises(TargetError, match="no sdist for version 9.9.9"):
        gitreins_sdist.download_sdist("9.9.9")
    with pytest.raises(TargetError, match="has no tests/ folder"):
        gitreins_sdist.download_sdist("1.2.3")


def test_a_local_tree_with_tests_is_used_as_it_is(tmp_path: Path):
    (tmp_path / "tests").mkdir()
    tree = GitreinsTree(version="0.0.1", root=tmp_path, origin="path")
    assert gitreins_sdist.tests_root(tree) == tmp_path
