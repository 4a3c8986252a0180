"""Targets that are a library released on PyPI: its trees and the environments they run in.

A :class:`Library` describes one (langchain, pydantic-ai ...). A *spec* names a tree:

- ``""`` or the target's name: the pinned release (:attr:`Library.pinned`);
- ``"<name>==X"`` or ``"X"``: that release's wheel from PyPI (no dependencies, nothing
  installed), unpacked into ``.cache/<name>/trees/X/``, which git ignores;
- a path to a folder that holds :attr:`Library.marker` (an unpacked wheel, a mutated
  copy, a checkout's package folder); it counts as the version it declares (a
  ``*.dist-info`` beside it, or its ``pyproject.toml``).

Each version runs in its own environment, ``.cache/<name>/envs/<key>/``: the version's
dependencies installed from a lock with hashes, plus ctxaudit's test pins
(:mod:`ctxaudit.targets.uvenv`). The audited releases' locks are committed
(``locks/<name>-X.txt`` in the target's folder); any other version's is resolved once,
when its environment is built, and kept beside it (``lock.txt``). The tree comes first
on the child's path, so the environment's own copy of the library is never what runs.

**Peer suite** (the mutation audit's comparison with the library's own tests, see
mutation/README.md, "Peer comparison"). A wheel ships no tests; a release's sdist may.
:meth:`Library.peer_tests` is a folder with ``tests/``: a local tree's own, else the
release's sdist, fetched with pip (which checks the hash the index publishes) and
unpacked into ``.cache/<name>/peer/X/`` (git ignores it; no third-party code is
committed). Its tests need more than the release's dependencies (pytest plugins, test
helpers), so they run in a second environment, never in the release's one (ctxaudit's
own suites keep running against exactly the release's lock and the test pins):

- its lock is ``locks/<name>-X-peer.txt`` where committed (written by
  :meth:`Library.resolve_peer_lock`), else resolved once when the environment is built
  and kept beside it; either way it is resolved by uv with hashes from
  :meth:`Library.peer_requirements`: the release itself, the sdist's
  ``[dependency-groups] test`` and ctxaudit's test pins (what the mutation worker
  imports); the release's own lock, where committed, constrains it, so every package
  the two environments share is at the same version, except one the test group asks
  a range of that a pin is outside (langchain 1.2.0's tests: pytest<9): there the
  harness's own tests decide, and the lock's header and the build's log say so; any
  other conflict is a resolution error, not a silent mix;
- it is installed with ``--require-hashes`` into ``.cache/<name>/envs/<key>/``, the key
  over that lock (or the requirements it is resolved from), the build scheme, the
  interpreter and the word ``peer``, so it never shares a folder with a release's env;
- a child runs it as the release's environment is run (:meth:`Library.child_environ`):
  the tree first on the path, so the peer environment's own copy of the library is
  never what its tests exercise.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
import tarfile
import tomllib
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from ctxaudit import paths, procs
from ctxaudit.targets import pypi_build, uvenv
from ctxaudit.targets.base import TargetError
from ctxaudit.targets.pip_errors import pip_reason
from ctxaudit.targets.pypi_build import STAMP, Env, PeerLock, reuse

__all__ = ["STAMP", "Env", "Library", "PeerLock", "Tree"]

_SCHEME = "1"  # part of an environment's key: bump when the build steps change
_VERSION_RE = re.compile(r"^\d+(\.\d+)*((a|b|rc)\d+|\.post\d+|\.dev\d+)?$")


@dataclass(frozen=True)
class Tree:
    name: str  # the target's name
    version: str
    root: Path  # the folder that holds the library's import package
    origin: str  # "pypi" or "path"

    @property
    def label(self) -> str:
        return f"{self.name}-{self.version}"


@dataclass(frozen=True)
class Library:
    name: str  # the target's name, and the spec prefix (``name==X``)
    dist: str  # the distribution on PyPI whose wheel is the tree (pydantic-ai-slim)
    marker: str  # a file under a tree's root that only such a tree holds
    pinned: str  # the current release
    locks: Path  # the committed locks, ``<name>-X.txt``
    what: str  # how an error names what the marker stands for ("a langchain v1 tree")
    #: ``CTXAUDIT_<PREFIX>_TREE`` / ``_VERSION`` name the tree in a child's environment
    env_prefix: str
    extra_environ: Mapping[str, str] = field(default_factory=dict)
    #: the distribution's extras its environment installs (google-adk's ``db``: the
    #: SQL session service's driver), and what it installs beside it (google-adk 1.x
    #: declares no ``db`` extra; its SQLAlchemy's asyncio needs ``greenlet``, which
    #: SQLAlchemy 2.1 no longer brings by itself)
    extras: tuple[str, ...] = ()
    beside: tuple[str, ...] = ()
    #: the sdist's ``[dependency-groups]`` entry its tests need
    peer_group: str = "test"
    #: where that entry is: ``dependency-groups`` (PEP 735), or
    #: ``optional-dependencies`` (an extra of ``[project]``: strands-agents' ``dev``)
    peer_table: str = "dependency-groups"
    #: distributions of that group the peer suite leaves out (normalized names): the
    #: docs, lint and type-check tools, and the packages only unselected tests import
    peer_omit: frozenset[str] = frozenset()
    #: what its tests import that no group declares (its own CI installs it with extras)
    peer_add: tuple[str, ...] = ()
    #: the peer suite's environment variables, instead of :attr:`extra_environ` (which
    #: sets up the rig's runs; the library's tests may assert on what it changes)
    peer_environ: Mapping[str, str] | None = None

    @property
    def wheel_name(self) -> str:
        return re.sub(r"[-_.]+", "_", self.dist).lower()

    def requirements(self, version: str) -> list[str]:
        """What the release's environment installs: the release with its extras, and
        what goes beside it."""
        extras = f"[{','.join(self.extras)}]" if self.extras else ""
        return [f"{self.dist}{extras}=={version}", *self.beside]

    def cache_root(self) -> Path:
        """``.cache/<name>`` (under ``$CTXAUDIT_CACHE`` when set)."""
        return paths.target_cache() / self.name

    # ------------------------------------------------------------------ trees

    def resolve(self, spec: str | None) -> Tree:
        """One tree on disk for a spec that is not a range."""
        spec = (spec or "").strip()
        if spec in ("", self.name, "pinned"):
            return Tree(self.name, self.pinned, self.download(self.pinned), "pypi")
        if spec.startswith(f"{self.name}=="):
            spec = spec.removeprefix(f"{self.name}==").strip()
            if not _VERSION_RE.match(spec):
                raise TargetError(f"{self.name}: {spec!r} is not a version number")
            return Tree(self.name, spec, self.download(spec), "pypi")
        if _VERSION_RE.match(spec) and not Path(spec).exists():
            return Tree(self.name, spec, self.download(spec), "pypi")
        return self.from_path(Path(spec))

    def is_tree(self, path: Path) -> bool:
        return (path / self.marker).is_file()

    def from_path(self, path: Path) -> Tree:
        path = path.expanduser()
        if not path.exists():
            raise TargetError(
                f"{self.name}: no such path {str(path)!r} (and it is not a version number)"
            )
        root = path.resolve()
        package = self.marker.split("/", 1)[0]
        if root.name == package and (root.parent / self.marker).is_file():
            root = root.parent
        if not self.is_tree(root):
            raise TargetError(
                f"{self.name}: {str(path)!r} is not {self.what} (no {self.marker} in it)"
            )
        version = self.declared_version(root)
        if version is None:
            raise TargetError(
                f"{self.name}: cannot tell which version the tree {str(path)!r} is "
                f"(no {self.wheel_name}-*.dist-info or pyproject.toml beside {package}/)"
            )
        return Tree(self.name, version, root, "path")

    def declared_version(self, root: Path) -> str | None:
        for meta in sorted(root.glob("*.dist-info/METADATA")):
            if not meta.parent.name.lower().startswith(f"{self.wheel_name}-"):
                continue
            for line in meta.read_text(encoding="utf-8", errors="replace").splitlines():
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
        pyproject = root / "pyproject.toml"
        if pyproject.is_file():
            try:
                project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
            except (tomllib.TOMLDecodeError, OSError):
                return None
            if project.get("name") == self.dist and isinstance(project.get("version"), str):
                return str(project["version"])
        return None

    def download(self, version: str) -> Path:
        """Unpack the release's wheel into the cache (once) and return it."""
        dest = self.cache_root() / "trees" / version
        if self.is_tree(dest):
            return dest
        dest.parent.mkdir(parents=True, exist_ok=True)
        with procs.staged(dest.parent, version) as tmp:
            wheels = self._fetch(version, "--only-binary", "*.whl", Path(tmp), "published version")
            unpacked = Path(tmp) / "tree"
            with zipfile.ZipFile(wheels[0]) as zf:
                zf.extractall(unpacked)
            if not self.is_tree(unpacked):
                raise TargetError(
                    f"{self.name}: version {version} has no {self.marker}, so it is not a "
                    f"{self.what} ctxaudit can check"
                )
            if dest.exists():
                shutil.rmtree(dest)
            unpacked.rename(dest)
        return dest

    def _fetch(self, version: str, binary: str, glob: str, tmp: Path, what: str) -> list[Path]:
        """pip downloads the release's one archive (``binary`` ``:all:``: its wheel, or
        its sdist) into ``tmp``, checked against the index's hash; the archives of this
        distribution found there. None found is a :class:`TargetError` naming ``what``."""
        cmd = [
            sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
            binary, ":all:", "--disable-pip-version-check",
            "-d", str(tmp), f"{self.dist}=={version}",
        ]  # fmt: skip
        proc = uvenv.run(cmd)
        found = [
            a
            for a in tmp.glob(glob)
            if re.sub(r"[-_.]+", "_", a.name).lower().startswith(self.wheel_name)
        ]
        if proc.returncode != 0 or not found:
            reason = pip_reason(proc.stderr)
            raise TargetError(f"{self.name}: no {what} {version!r} could be fetched ({reason})")
        return found

    # ------------------------------------------------------------ environments

    def committed_lock(self, version: str) -> Path | None:
        lock = self.locks / f"{self.name}-{version}.txt"
        return lock if lock.is_file() else None

    def env_key(self, version: str) -> str:
        """16 hex digits over what goes into the environment: the version's committed
        lock (or its name, for a lock resolved at build time), the test pins and the
        interpreter."""
        lock = self.committed_lock(version)
        seed = (
            lock.read_bytes()
            if lock
            else f"resolve {' '.join(self.requirements(version))}".encode()
        )
        digest = hashlib.sha256(seed)
        pins = uvenv.test_pins(self.name)
        digest.update("\n".join(["", _SCHEME, sys.version.split()[0], *pins]).encode())
        return digest.hexdigest()[:16]

    def ensure_env(self, tree: Tree, log: Callable[[str], None] = lambda _: None) -> Env:
        """The tree's environment: reused when its stamp is there, else built."""
        key = self.env_key(tree.version)
        envs = self.cache_root() / "envs"
        dest = envs / key
        found = reuse(dest, key)
        if found is not None:
            return found
        envs.mkdir(parents=True, exist_ok=True)
        with uvenv.file_lock(envs / f"{key}.lock"):
            return reuse(dest, key) or self._build(tree.version, dest, key, log)

    def child_environ(self, env: Env, tree: Tree, *, peer: bool = False) -> dict[str, str]:
        """The environment of a child process that runs ``tree`` in ``env`` (with
        ``peer``, the library's own tests in its peer environment)."""
        out = uvenv.inherited_environ()
        out.update(
            PATH=os.pathsep.join([str(env.python.parent), os.environ.get("PATH", "")]),
            VIRTUAL_ENV=str(env.python.parent.parent),
            # the tree first; then ctxaudit's packages, and nothing else of its caller's
            PYTHONPATH=os.pathsep.join([str(tree.root), *uvenv.import_roots()]),
            PYTHONPYCACHEPREFIX=str(env.root / "pycache"),
            PYTHONNOUSERSITE="1",
            **uvenv.import_environ(),
            **{f"{self.env_prefix}_TREE": str(tree.root)},
            **{f"{self.env_prefix}_VERSION": tree.version},
        )
        if peer and self.peer_environ is not None:
            out.update(self.peer_environ)
        else:
            out.update(self.extra_environ)
        return out

    # ------------------------------------------------------------- peer suite

    def sdist(self, version: str) -> Path:
        """The release's sdist, unpacked into ``.cache/<name>/peer/<version>/`` (once).

        pip fetches it (``--no-binary :all: --no-deps``: the one archive, nothing built
        or installed) and checks it against the hash the index publishes."""
        dest = self.cache_root() / "peer" / version
        if (dest / "pyproject.toml").is_file() or (dest / "PKG-INFO").is_file():
            return dest
        dest.parent.mkdir(parents=True, exist_ok=True)
        with procs.staged(dest.parent, version) as tmp:
            archives = self._fetch(
                version, "--no-binary", "*.tar.gz", Path(tmp), "sdist of version"
            )
            with tarfile.open(archives[0]) as tf:
                tf.extractall(Path(tmp) / "x", filter="data")
            tops = [p for p in (Path(tmp) / "x").iterdir() if p.is_dir()]
            if len(tops) != 1:
                raise TargetError(f"{self.name}: the sdist of {version} has no single top folder")
            if dest.exists():
                shutil.rmtree(dest)
            tops[0].rename(dest)
        return dest

    def peer_tests(self, tree: Tree) -> Path | None:
        """A folder with the library's own ``tests/`` for ``tree``: a local tree's (a
        checkout's package folder holds them), else its release's sdist's; None when
        that sdist ships none."""
        if tree.origin == "path" and (tree.root / "tests").is_dir():
            return tree.root
        root = self.sdist(tree.version)
        return root if (root / "tests").is_dir() else None

    def peer_requirements(self, version: str, root: Path) -> list[str]:
        """What the peer environment is resolved from: the release, the
        :attr:`peer_group` of ``root``'s ``pyproject.toml`` (in its :attr:`peer_table`) less
        :attr:`peer_omit`, plus :attr:`peer_add`, and ctxaudit's test pins (the mutation
        worker's own imports: pytest, Hypothesis, coverage)."""
        try:
            project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise TargetError(
                f"{self.name}: cannot read {root / 'pyproject.toml'}: {exc}"
            ) from None
        # an ``{include-group = ...}`` entry is not a requirement; none of these ship one
        table = (
            project.get("project", {}).get("optional-dependencies", {})
            if self.peer_table == "optional-dependencies"
            else project.get("dependency-groups", {})
        )
        group = table.get(self.peer_group)
        if not isinstance(group, list):
            raise TargetError(
                f"{self.name}: {root / 'pyproject.toml'} has no [{self.peer_table}] "
                f"{self.peer_group!r}, which its peer suite is installed from"
            )
        kept: list[str] = []
        for r in group:
            if not isinstance(r, str):
                continue
            name = re.split(r"[\s\[<>=!~;]", r.strip(), maxsplit=1)[0]
            if re.sub(r"[-_.]+", "-", name).lower() not in self.peer_omit and r not in kept:
                kept.append(r)
        added = [r for r in self.peer_add if r not in kept]
        # ctxaudit's test pins, but where the group asks for another range of one (langchain
        # 1.2.0's tests: pytest<9) the harness's own tests decide, as for the release's pins
        ranges = {canonicalize_name(r.name): r.specifier for r in _requirements([*kept, *added])}
        pins = []
        for pin in uvenv.test_pins(self.name):
            name, _, pinned = pin.partition("==")
            if ranges.get(canonicalize_name(name), SpecifierSet()).contains(
                pinned, prereleases=True
            ):
                pins.append(pin)
        return [f"{self.dist}=={version}", *kept, *added, *pins]

    def committed_peer_lock(self, version: str) -> Path | None:
        lock = self.locks / f"{self.name}-{version}-peer.txt"
        return lock if lock.is_file() else None

    def peer_env_key(self, version: str, requirements: list[str]) -> str:
        """16 hex digits over the peer lock (or the requirements it is resolved from),
        the build scheme, the interpreter and ``peer``."""
        lock = self.committed_peer_lock(version)
        seed = lock.read_bytes() if lock else "\n".join(["resolve", *requirements]).encode()
        digest = hashlib.sha256(seed)
        digest.update("\n".join(["", _SCHEME, sys.version.split()[0], "peer"]).encode())
        return digest.hexdigest()[:16]

    def ensure_peer_env(self, tree: Tree, log: Callable[[str], None] = lambda _: None) -> Env:
        """The environment the peer suite of ``tree``'s release runs in: reused when its
        stamp is there, else built (see the module's docstring)."""
        root = self.peer_tests(tree)
        if root is None:
            raise TargetError(f"{self.name}: the sdist of {tree.version} ships no tests/")
        requirements = self.peer_requirements(tree.version, root)
        key = self.peer_env_key(tree.version, requirements)
        envs = self.cache_root() / "envs"
        dest = envs / key
        found = reuse(dest, key)
        if found is not None:
            return found
        envs.mkdir(parents=True, exist_ok=True)
        peer = PeerLock(self.committed_peer_lock(tree.version), requirements)
        with uvenv.file_lock(envs / f"{key}.lock"):
            return reuse(dest, key) or self._build(tree.version, dest, key, log, peer)

    def resolve_peer_lock(self, version: str, out: Path) -> None:
        """Resolve the peer lock of ``version`` into ``out`` (to commit as
        ``locks/<name>-X-peer.txt``): :meth:`peer_requirements` with uv, hashed, the
        release's committed lock as constraints (the packages both hold are the same)."""
        pypi_build.write_peer_lock(self, version, out)

    def _build(
        self,
        version: str,
        dest: Path,
        key: str,
        log: Callable[[str], None],
        peer: PeerLock | None = None,
    ) -> Env:
        """Build an environment in ``dest`` (:func:`ctxaudit.targets.pypi_build.build`)."""
        return pypi_build.build(self, version, dest, key, log, peer)


def _requirements(lines: list[str]) -> list[Requirement]:
    """The requirements of ``lines`` that parse (a group's odd entry is left to uv)."""
    out = []
    for line in lines:
        try:
            out.append(Requirement(line))
        except InvalidRequirement:
            continue
    return out
