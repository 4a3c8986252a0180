"""The gitreins target: find a gitreins source tree from a spec and import it.

A *spec* names what to test:

- ``""`` or ``"pinned"``: the version pinned in pyproject.toml (installed in
  the environment);
- a version, ``"0.14.0"`` or ``"gitreins==0.14.0"``: downloaded from PyPI (a
  wheel, no dependencies, nothing installed) and unpacked into
  ``.cache/gitreins/<version>/``, which git ignores;
- a path to a source tree that has ``engine/eval_cap.py`` and
  ``engine/evaluator.py`` (an unpacked sdist, a checkout, a mutated copy).

A local tree counts as the version it declares (pyproject.toml, PKG-INFO or a
``*.dist-info`` folder beside ``engine/``).

Errors are :class:`~ctxaudit.targets.base.TargetError` (one line), re-exported here.
What gitreins is to the audit (its properties, suites, findings, mutation scope) is
:mod:`ctxaudit.targets.gitreins.target`.

Only one gitreins can be imported in a process (its package is called
``engine``); :func:`load` refuses a second, different one. Each target version
runs in its own process.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import re
import shutil
import sys
import tomllib
import types
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ctxaudit import paths, procs
from ctxaudit.targets.base import TargetError as TargetError  # re-exported
from ctxaudit.targets.pip_errors import pip_reason

PINNED = "0.17.1"

CACHE = paths.target_cache() / "gitreins"
_VERSION_RE = re.compile(r"^\d+(\.\d+)*([abc]|rc|\.post|\.dev)?\d*$")
_REQUIRED = ("engine/eval_cap.py", "engine/evaluator.py", "engine/llm.py")


@dataclass(frozen=True)
class GitreinsTree:
    version: str
    root: Path  # the folder that contains engine/
    origin: str  # "pinned", "pypi" or "path"

    @property
    def label(self) -> str:
        return f"gitreins-{self.version}"

    @property
    def engine_dir(self) -> Path:
        return self.root / "engine"


def resolve(spec: str | None) -> GitreinsTree:
    """Turn a spec into a tree on disk, downloading a release if needed."""
    spec = (spec or "").strip()
    if spec in ("", "pinned"):
        return _installed_or_download(PINNED)
    if spec.startswith("gitreins=="):
        spec = spec.removeprefix("gitreins==").strip()
        if not _VERSION_RE.match(spec):
            raise TargetError(f"gitreins: {spec!r} is not a version number")
        return _installed_or_download(spec)
    if _VERSION_RE.match(spec) and not Path(spec).exists():
        return _installed_or_download(spec)
    return from_path(Path(spec))


def from_path(path: Path) -> GitreinsTree:
    path = path.expanduser()
    if not path.exists():
        raise TargetError(f"gitreins: no such path {str(path)!r} (and it is not a version number)")
    root = path.resolve()
    if root.name == "engine" and (root / "eval_cap.py").is_file():
        root = root.parent
    missing = [rel for rel in _REQUIRED if not (root / rel).is_file()]
    if missing:
        raise TargetError(
            f"gitreins: {str(path)!r} is not a gitreins source tree (missing {', '.join(missing)})"
        )
    version = declared_version(root)
    if version is None:
        raise TargetError(
            f"gitreins: cannot tell which version the tree {str(path)!r} is "
            "(no pyproject.toml, PKG-INFO or *.dist-info beside engine/)"
        )
    return GitreinsTree(version=version, root=root, origin="path")


def declared_version(root: Path) -> str | None:
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            version = data.get("project", {}).get("version")
            if isinstance(version, str):
                return version
        except (tomllib.TOMLDecodeError, OSError):
            pass
    candidates = [root / "PKG-INFO", *sorted(root.glob("gitreins-*.dist-info/METADATA"))]
    for meta in candidates:
        if meta.is_file():
            for line in meta.read_text(encoding="utf-8", errors="replace").splitlines():
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
    return None


def _installed_or_download(version: str) -> GitreinsTree:
    try:
        installed = importlib.metadata.version("gitreins")
    except importlib.metadata.PackageNotFoundError:
        installed = None
    if installed == version:
        spec = importlib.util.find_spec("engine")
        if spec is not None and spec.submodule_search_locations:
            root = Path(next(iter(spec.submodule_search_locations))).parent
            if all((root / rel).is_file() for rel in _REQUIRED):
                return GitreinsTree(version=version, root=root, origin="pinned")
    return GitreinsTree(version=version, root=download(version), origin="pypi")


def download(version: str) -> Path:
    """Unpack gitreins==version's wheel into the cache (once) and return it."""
    dest = CACHE / version
    if all((dest / rel).is_file() for rel in _REQUIRED):
        return dest
    CACHE.mkdir(parents=True, exist_ok=True)
    with procs.staged(CACHE, version) as tmp:
        proc = procs.run(
            [
                sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                "--only-binary", ":all:", "--disable-pip-version-check",
                "-d", str(tmp), f"gitreins=={version}",
            ]
        )  # fmt: skip
        wheels = list(Path(tmp).glob("gitreins-*.whl"))
        if proc.returncode != 0 or not wheels:
            reason = pip_reason(proc.stderr)
            raise TargetError(
                f"gitreins: no published version {version!r} could be fetched ({reason})"
            )
        unpacked = Path(tmp) / "tree"
        with zipfile.ZipFile(wheels[0]) as zf:
            zf.extractall(unpacked)
        missing = [rel for rel in _REQUIRED if not (unpacked / rel).is_file()]
        if missing:
            raise TargetError(
                f"gitreins: version {version} has no budget/valve code "
                f"(missing {', '.join(missing)}); ctxaudit checks versions that have it"
            )
        if dest.exists():
            shutil.rmtree(dest)
        unpacked.rename(dest)
    return dest


@dataclass(frozen=True)
class GitreinsModules:
    tree: GitreinsTree
    eval_cap: types.ModuleType
    evaluator: types.ModuleType
    llm: types.ModuleType


def load(tree: GitreinsTree) -> GitreinsModules:
    """Import the tree's ``engine`` package in this process."""
    already = sys.modules.get("engine")
    if already is not None:
        where = Path(getattr(already, "__file__", "") or "").resolve().parent.parent
        if where != tree.root.resolve():
            raise TargetError(
                f"gitreins: another gitreins ({where}) is already imported in this process; "
                "run each target in its own process"
            )
    else:
        sys.path.insert(0, str(tree.root))
        importlib.invalidate_caches()
    eval_cap = importlib.import_module("engine.eval_cap")
    evaluator = importlib.import_module("engine.evaluator")
    llm = importlib.import_module("engine.llm")
    got = Path(eval_cap.__file__ or "").resolve()
    if not got.is_relative_to(tree.root.resolve()):
        raise TargetError(f"gitreins: imported {got}, expected a module under {tree.root}")
    return GitreinsModules(tree=tree, eval_cap=eval_cap, evaluator=evaluator, llm=llm)
