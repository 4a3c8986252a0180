"""openai-agents trees and the environments they run in.

A *spec* names an openai-agents release (PyPI ``openai-agents``, import name ``agents``,
whose ``agents.memory`` holds the sessions and ``OpenAIResponsesCompactionSession``):

- ``""`` or ``"openai-agents"``: the pinned release (:data:`PINNED`);
- ``"openai-agents==X"`` or ``"X"``: that release's wheel from PyPI (no dependencies,
  nothing installed), unpacked into ``.cache/openai-agents/trees/X/``, which git ignores;
- a path to a folder that holds ``agents/memory/openai_responses_compaction_session.py``
  (an unpacked wheel, a mutated copy, ``src`` of a checkout); it counts as the version it
  declares (an ``openai_agents-*.dist-info`` beside it, or its ``pyproject.toml``).

Each version runs in its own environment, ``.cache/openai-agents/envs/<key>/``: the
version's dependencies installed from a lock with hashes, plus ctxaudit's test pins
(:mod:`ctxaudit.targets.uvenv`). The audited releases' locks are committed
(``locks/openai-agents-X.txt``); any other version's is resolved once, when its
environment is built, and kept beside it (``lock.txt``). The tree comes first on the
child's path, so the environment's own copy of ``agents`` is never what runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import sys
import tempfile
import time
import tomllib
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ctxaudit.paths import REPO_ROOT
from ctxaudit.targets import uvenv
from ctxaudit.targets.base import TargetError

NAME = "openai-agents"
DIST = "openai_agents"  # the wheel's and dist-info's name
PACKAGE = "agents"
PINNED = "0.24.0"  # the current release
COMPACTION = "agents/memory/openai_responses_compaction_session.py"
LOCKS = Path(__file__).with_name("locks")
STAMP = "ctxaudit-env.json"
_SCHEME = "1"  # part of an environment's key: bump when the build steps change
_VERSION_RE = re.compile(r"^\d+(\.\d+)*((a|b|rc)\d+|\.post\d+|\.dev\d+)?$")


@dataclass(frozen=True)
class AgentsTree:
    version: str
    root: Path  # the folder that holds agents/
    origin: str  # "pypi" or "path"

    @property
    def label(self) -> str:
        return f"{NAME}-{self.version}"


@dataclass(frozen=True)
class AgentsEnv:
    root: Path  # .cache/openai-agents/envs/<key>
    python: Path
    key: str
    lock: Path  # the lock it was installed from


def cache_root() -> Path:
    """``.cache/openai-agents`` (under ``$CTXAUDIT_CACHE`` when set)."""
    return Path(os.environ.get("CTXAUDIT_CACHE", REPO_ROOT / ".cache")) / NAME


def resolve(spec: str | None) -> AgentsTree:
    """One tree on disk for a spec that is not a range."""
    spec = (spec or "").strip()
    if spec in ("", NAME, "pinned"):
        return AgentsTree(PINNED, download(PINNED), "pypi")
    if spec.startswith(f"{NAME}=="):
        spec = spec.removeprefix(f"{NAME}==").strip()
        if not _VERSION_RE.match(spec):
            raise TargetError(f"{NAME}: {spec!r} is not a version number")
        return AgentsTree(spec, download(spec), "pypi")
    if _VERSION_RE.match(spec) and not Path(spec).exists():
        return AgentsTree(spec, download(spec), "pypi")
    return from_path(Path(spec))


def is_tree(path: Path) -> bool:
    return (path / COMPACTION).is_file()


def from_path(path: Path) -> AgentsTree:
    path = path.expanduser()
    if not path.exists():
        raise TargetError(f"{NAME}: no such path {str(path)!r} (and it is not a version number)")
    root = path.resolve()
    if root.name == PACKAGE and (root.parent / COMPACTION).is_file():
        root = root.parent
    if not is_tree(root):
        raise TargetError(
            f"{NAME}: {str(path)!r} is not an openai-agents tree (no {COMPACTION} in it)"
        )
    version = declared_version(root)
    if version is None:
        raise TargetError(
            f"{NAME}: cannot tell which version the tree {str(path)!r} is "
            "(no openai_agents-*.dist-info or pyproject.toml beside agents/)"
        )
    return AgentsTree(version, root, "path")


def declared_version(root: Path) -> str | None:
    for meta in sorted(root.glob(f"{DIST}-*.dist-info/METADATA")):
        for line in meta.read_text(errors="replace").splitlines():
            if line.startswith("Version:"):
                return line.split(":", 1)[1].strip()
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            project = tomllib.loads(pyproject.read_text()).get("project", {})
        except (tomllib.TOMLDecodeError, OSError):
            return None
        if project.get("name") == NAME and isinstance(project.get("version"), str):
            return str(project["version"])
    return None


def download(version: str) -> Path:
    """Unpack openai-agents==version's wheel into the cache (once) and return it."""
    dest = cache_root() / "trees" / version
    if is_tree(dest):
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
        cmd = [
            sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
            "--only-binary", ":all:", "--disable-pip-version-check",
            "-d", tmp, f"{NAME}=={version}",
        ]  # fmt: skip
        proc = uvenv.run(cmd)
        wheels = list(Path(tmp).glob(f"{DIST}-*.whl"))
        if proc.returncode != 0 or not wheels:
            lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("ERROR")]
            reason = lines[0].removeprefix("ERROR: ") if lines else proc.stderr.strip()[-200:]
            raise TargetError(
                f"{NAME}: no published version {version!r} could be fetched ({reason})"
            )
        unpacked = Path(tmp) / "tree"
        with zipfile.ZipFile(wheels[0]) as zf:
            zf.extractall(unpacked)
        if not is_tree(unpacked):
            raise TargetError(
                f"{NAME}: version {version} has no {COMPACTION}; ctxaudit checks the "
                "releases with OpenAIResponsesCompactionSession (0.7.0 and later)"
            )
        if dest.exists():
            shutil.rmtree(dest)
        unpacked.rename(dest)
    return dest


# ---------------------------------------------------------------- environments


def committed_lock(version: str) -> Path | None:
    lock = LOCKS / f"{NAME}-{version}.txt"
    return lock if lock.is_file() else None


def env_key(version: str) -> str:
    """16 hex digits over what goes into the environment: the version's committed lock
    (or its name, for a lock resolved at build time), the test pins and the interpreter."""
    lock = committed_lock(version)
    digest = hashlib.sha256(lock.read_bytes() if lock else f"resolve {NAME}=={version}".encode())
    pins = uvenv.test_pins(NAME)
    digest.update("\n".join(["", _SCHEME, sys.version.split()[0], *pins]).encode())
    return digest.hexdigest()[:16]


def ensure_env(tree: AgentsTree, log: Callable[[str], None] = lambda _: None) -> AgentsEnv:
    """The tree's environment: reused when its stamp is there, else built."""
    key = env_key(tree.version)
    envs = cache_root() / "envs"
    dest = envs / key
    found = _reuse(dest, key)
    if found is not None:
        return found
    envs.mkdir(parents=True, exist_ok=True)
    with uvenv.file_lock(envs / f"{key}.lock"):
        return _reuse(dest, key) or _build(tree.version, dest, key, log)


def child_environ(env: AgentsEnv, tree: AgentsTree) -> dict[str, str]:
    """The environment of a child process that runs ``tree`` in ``env``."""
    out = uvenv.inherited_environ()
    out.update(
        PATH=os.pathsep.join([str(env.python.parent), os.environ.get("PATH", "")]),
        VIRTUAL_ENV=str(env.python.parent.parent),
        PYTHONPATH=os.pathsep.join([str(tree.root), str(REPO_ROOT)]),
        PYTHONPYCACHEPREFIX=str(env.root / "pycache"),
        PYTHONNOUSERSITE="1",
        OPENAI_AGENTS_DISABLE_TRACING="1",  # never export traces (the rig disables them too)
        OPENAI_API_KEY="ctxaudit-fake",  # only the rig's local server is ever called
        CTXAUDIT_OPENAI_AGENTS_TREE=str(tree.root),
        CTXAUDIT_OPENAI_AGENTS_VERSION=tree.version,
    )
    return out


def _reuse(dest: Path, key: str) -> AgentsEnv | None:
    try:
        stamp = json.loads((dest / STAMP).read_text())
        lock = Path(stamp["lock"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    python = dest / "venv" / "bin" / "python"
    return AgentsEnv(dest, python, key, lock) if python.exists() else None


def _build(version: str, dest: Path, key: str, log: Callable[[str], None]) -> AgentsEnv:
    uv = uvenv.find_uv(NAME)
    pins = uvenv.test_pins(NAME)
    if dest.exists():
        shutil.rmtree(dest)
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{key}-", dir=dest.parent))
    venv = tmp / "venv"
    python = venv / "bin" / "python"
    lock = committed_lock(version)
    steps: list[tuple[str, list[str]]] = []
    if lock is None:
        (tmp / "requirements.in").write_text(f"{NAME}=={version}\n")
        lock = tmp / "lock.txt"
        steps.append(
            (
                "uv pip compile",
                [str(uv), "pip", "compile", "--quiet", "--universal", "--generate-hashes",
                 "--python-version", "{}.{}".format(*sys.version_info[:2]),
                 str(tmp / "requirements.in"), "-o", str(lock)],
            )
        )  # fmt: skip
    steps += [
        ("uv venv", [str(uv), "venv", "--no-project", "--relocatable",
                     "-p", sys.executable, str(venv)]),
        ("uv pip install", [str(uv), "pip", "install", "--python", str(python),
                            "--require-hashes", "-r", str(lock)]),
        (
            "uv pip install (test pins)",
            [str(uv), "pip", "install", "--python", str(python), "-c", str(lock), *pins],
        ),
    ]  # fmt: skip
    log(f"{NAME}: building the environment {key} for {NAME}=={version}")
    start = time.monotonic()
    try:
        for step, cmd in steps:
            proc = uvenv.run(cmd)
            with (tmp / "build.log").open("a") as fh:
                fh.write(f"$ {shlex.join(cmd)}\n{proc.stdout}{proc.stderr}")
                fh.write(f"[exit {proc.returncode}]\n")
            if proc.returncode != 0:
                raise uvenv.EnvError(
                    f"{NAME}: building the environment for {NAME}=={version} failed at {step}: "
                    f"{uvenv.uv_reason(proc.stderr)} (full log: {dest / 'build.log'})"
                )
        kept_lock = dest / "lock.txt" if lock.parent == tmp else lock
        stamp = {
            "key": key,
            "version": version,
            "lock": str(kept_lock),
            "python": sys.executable,
            "test_pins": pins,
            "build_seconds": round(time.monotonic() - start, 1),
            "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        (tmp / STAMP).write_text(json.dumps(stamp, indent=2) + "\n")
        tmp.rename(dest)
    except BaseException:
        if (tmp / "build.log").is_file():  # keep the log where the message says
            dest.mkdir(parents=True, exist_ok=True)
            (tmp / "build.log").replace(dest / "build.log")
        raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log(f"{NAME}: environment {key} built in {stamp['build_seconds']} s")
    return AgentsEnv(dest, dest / "venv" / "bin" / "python", key, kept_lock)
