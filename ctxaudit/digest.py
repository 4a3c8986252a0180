"""Digests of files on disk: what the audit's step cache and the mutation runner's
verdict cache key their entries by (a tree's code, ctxaudit's own suite)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

from ctxaudit.paths import HERE, REPO_ROOT

#: what ctxaudit's suite is made of: a change to any of these is a change of the checks
SUITE_PARTS = ("model", "tests", "mutation", "ctxaudit", "requirements.lock", "pyproject.toml")
#: folders never part of a digest (caches, and the mutation runner's work copies)
SKIP_DIRS = frozenset({"__pycache__", ".pytest_cache", ".hypothesis", ".mypy_cache", "work"})


def tree_digest(paths: Iterable[Path], base: Path, skip: frozenset[str] = SKIP_DIRS) -> str:
    """sha256 over the relative path and bytes of every file under ``paths`` (folders
    named in ``skip`` left out)."""
    h = hashlib.sha256()
    files: list[Path] = []
    for p in paths:
        if p.is_file():
            files.append(p)
        elif p.is_dir():
            for dirpath, dirnames, filenames in os.walk(p):
                dirnames[:] = sorted(d for d in dirnames if d not in skip)
                files += [Path(dirpath) / f for f in filenames if not f.endswith((".pyc", ".pyo"))]
    for f in sorted(files, key=lambda f: f.relative_to(base).as_posix()):
        rel = f.relative_to(base).as_posix()
        h.update(rel.encode() + b"\0" + hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()


def suite_digest(repo: Path = REPO_ROOT) -> str:
    """The digest of ctxaudit's own suite (:data:`SUITE_PARTS` under ``repo``; an
    installed build's ``ctxaudit`` package is where it is installed)."""
    here = tree_digest([repo / part for part in SUITE_PARTS], repo)
    package = HERE  # the ctxaudit package folder
    if (repo / "ctxaudit").resolve() == package:
        return here
    installed = tree_digest([package], package.parent)
    return hashlib.sha256(f"{here}\0{installed}".encode()).hexdigest()
