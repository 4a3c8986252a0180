"""Python 3.12 environments for lightspeed-stack trees, built with uv.

One environment per lock: ``.cache/lightspeed/envs/<lock_hash>/``, shared by
the trees whose ``uv.lock`` is the same. It holds ``venv/`` (the tree's locked
runtime dependencies, installed with hashes, plus ctxaudit's test pins
``hypothesis``, ``pytest`` and ``coverage`` from requirements.lock, constrained to the lock),
``requirements.txt`` and ``constraints.txt`` (the export), ``build.log`` and
``ctxaudit-env.json``, the stamp written last: a folder without it is
half-built and is built again. Builds happen in a temporary folder that is
renamed into place.

A tree's own tests (its *peer suite*: ``tests/unit``, the fix audit's
``--own-tests`` and the mutation audit's peer comparison) need its ``dev``
dependency group too (pytest-asyncio, pytest-mock, ...): they run in a second
environment, ``peer=True``, exported with that group and keyed apart (the word
``peer`` is in its hash), never in the one ctxaudit's suites run in.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import tempfile
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from ctxaudit.targets import uvenv
from ctxaudit.targets.lightspeed.tree import (
    NAME,
    LightspeedTree,
    TargetError,
    cache_root,
    file_lock,
)

PYTHON_ENV = "CTXAUDIT_PYTHON312"
REQUIREMENTS_LOCK = uvenv.REQUIREMENTS_LOCK
#: installed into every environment at requirements.lock's versions (uvenv.TEST_PINS)
TEST_PINS = uvenv.TEST_PINS
STAMP = "ctxaudit-env.json"
TOKENIZERS = "litellm/litellm_core_utils/tokenizers"
CL100K = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"  # sha1 of cl100k_base's URL
_SCHEME = "1"  # part of the lock hash: bump when the build steps change


class EnvError(uvenv.EnvError, TargetError):
    """An environment that cannot be found or built. One line."""


@dataclass(frozen=True)
class LightspeedEnv:
    root: Path  # .cache/lightspeed/envs/<lock_hash>
    python: Path  # root/venv/bin/python
    lock_hash: str
    build_seconds: float | None  # None when an existing environment was reused
    size_bytes: int
    tiktoken_dir: Path


def find_python312() -> Path:
    """``$CTXAUDIT_PYTHON312``, else ``python3.12`` on PATH, else the highest
    ``~/.pyenv/versions/3.12*``; the real interpreter behind any shim."""
    explicit = os.environ.get(PYTHON_ENV, "").strip()
    if explicit:
        found = _probe(explicit)
        if found is None:
            raise EnvError(f"{NAME}: {PYTHON_ENV}={explicit!r} is not a Python 3.12 interpreter")
        return found
    candidates = [c for c in [shutil.which("python3.12")] if c]
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    candidates += [
        str(p)
        for p in sorted(pyenv.glob("versions/3.12*/bin/python3.12"), key=_by_version, reverse=True)
    ]
    for candidate in candidates:
        found = _probe(candidate)
        if found is not None:
            return found
    raise EnvError(
        f"{NAME}: no Python 3.12 found (python3.12 on PATH, {pyenv}/versions/3.12*); "
        f"install one (`pyenv install 3.12`, or put python3.12 on PATH) or set {PYTHON_ENV}"
    )


def find_uv() -> Path:
    """The ``uv`` of this interpreter's environment, else ``uv`` on PATH."""
    try:
        return uvenv.find_uv(NAME)
    except uvenv.EnvError as exc:
        raise EnvError(str(exc)) from None


def test_pins() -> list[str]:
    """``name==version`` of each of TEST_PINS, as requirements.lock pins it."""
    try:
        return uvenv.test_pins(NAME, REQUIREMENTS_LOCK)
    except uvenv.EnvError as exc:
        raise EnvError(str(exc)) from None


#: the dependency group of a tree's own tests (its pyproject.toml)
PEER_GROUP = "dev"


def lock_hash(tree: LightspeedTree, *, peer: bool = False) -> str:
    """16 hex digits of sha256 over the tree's uv.lock and the test pins (and, for the
    peer suite's environment, its group)."""
    lock = tree.root / "uv.lock"
    try:
        digest = hashlib.sha256(lock.read_bytes())
    except OSError:
        raise EnvError(f"{NAME}: {tree.label} has no readable uv.lock ({lock})") from None
    digest.update("\n".join(["", _SCHEME, *test_pins()]).encode())
    if peer:
        digest.update(f"\npeer {PEER_GROUP}".encode())
    return digest.hexdigest()[:16]


def ensure_env(
    tree: LightspeedTree, *, log: Callable[[str], None] = lambda _: None, peer: bool = False
) -> LightspeedEnv:
    """The tree's environment (``peer``: its own tests' one): reused when its stamp is
    there, else built."""
    key = lock_hash(tree, peer=peer)
    envs = cache_root() / "envs"
    dest = envs / key
    found = _reuse(dest, key)
    if found is not None:
        return found
    envs.mkdir(parents=True, exist_ok=True)
    with file_lock(envs / f"{key}.lock"):
        found = _reuse(dest, key)
        if found is not None:
            return found
        return _build(tree, dest, key, log, peer)


def tiktoken_cache_dir(env: LightspeedEnv) -> Path:
    """litellm's bundled BPE tables, usable as ``TIKTOKEN_CACHE_DIR`` offline."""
    return _tiktoken_dir(env.root / "venv")


def child_environ(env: LightspeedEnv, tree: LightspeedTree) -> dict[str, str]:
    """The environment of a child process that runs in ``env`` against ``tree``."""
    out = uvenv.inherited_environ()
    out.update(
        PATH=os.pathsep.join([str(env.python.parent), os.environ.get("PATH", "")]),
        VIRTUAL_ENV=str(env.python.parent.parent),
        PYTHONPATH=os.pathsep.join([str(tree.root / "src"), *uvenv.import_roots()]),
        # bytecode goes to the environment's own folder, never beside a tree's sources:
        # each module is compiled once, by the first child that imports it (uv installs
        # without bytecode; compiling all of site-packages up front cost 1-2 min a lock)
        PYTHONPYCACHEPREFIX=str(env.root / "pycache"),
        PYTHONNOUSERSITE="1",
        TIKTOKEN_CACHE_DIR=str(env.tiktoken_dir),
        OPENAI_API_KEY="sk-ctxaudit-dummy",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        LITELLM_LOCAL_MODEL_COST_MAP="True",  # litellm fetches its cost map at import otherwise
        **uvenv.import_environ(),
    )
    return out


# ---------------------------------------------------------------- internals


def _reuse(dest: Path, key: str) -> LightspeedEnv | None:
    try:
        stamp = json.loads((dest / STAMP).read_text(encoding="utf-8"))
        size = int(stamp["size_bytes"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    python = dest / "venv" / "bin" / "python"
    if not python.exists():
        return None
    return LightspeedEnv(
        root=dest,
        python=python,
        lock_hash=key,
        build_seconds=None,
        size_bytes=size,
        tiktoken_dir=_tiktoken_dir(dest / "venv"),
    )


def _build(
    tree: LightspeedTree, dest: Path, key: str, log: Callable[[str], None], peer: bool = False
) -> LightspeedEnv:
    uv = find_uv()
    python312 = find_python312()
    pins = test_pins()
    if peer:  # the tree's lock, its own tests' group included, decides what it pins
        pins = [p for p in pins if canonicalize_name(p.partition("==")[0]) not in _locked(tree)]
    if dest.exists():
        log(f"{NAME}: removing the half-built environment {dest}")
        shutil.rmtree(dest)
    for stale in dest.parent.glob(f".tmp-{key}-*"):  # a killed build's (we hold the lock)
        shutil.rmtree(stale, ignore_errors=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{key}-", dir=dest.parent))
    venv = tmp / "venv"
    venv_python = venv / "bin" / "python"
    requirements = tmp / "requirements.txt"
    constraints = tmp / "constraints.txt"
    # the runtime dependencies; for the peer suite, its own tests' group too (--no-dev
    # would take that group out again)
    groups = (
        ["--no-default-groups", "--group", PEER_GROUP]
        if peer
        else ["--no-dev", "--no-default-groups"]
    )
    export = [str(uv), "export", "--quiet", "--frozen", *groups,
              "--no-emit-project", "--no-header"]  # fmt: skip
    steps: list[tuple[str, list[str], Path | None]] = [
        ("uv export", [*export, "-o", str(requirements)], tree.root),
        ("uv export", [*export, "--no-hashes", "-o", str(constraints)], tree.root),
        (
            "uv venv",
            [str(uv), "venv", "--no-project", "--relocatable", "-p", str(python312), str(venv)],
            None,
        ),
        (
            "uv pip install",
            [str(uv), "pip", "install", "--python", str(venv_python), "--require-hashes",
             "-r", str(requirements)],
            None,
        ),
        (
            "uv pip install (test pins)",
            [str(uv), "pip", "install", "--python", str(venv_python),
             "-c", str(constraints), *pins],
            None,
        ),
    ]  # fmt: skip
    what = f"{tree.label}" + (" (its own tests)" if peer else "")
    log(f"{NAME}: building the Python 3.12 environment {key} for {what}")
    start = time.monotonic()
    try:
        for step, cmd, cwd in steps:
            log(f"{NAME}: {step}")
            proc = _run(cmd, cwd)
            with (tmp / "build.log").open("a") as fh:
                fh.write(
                    f"$ {shlex.join(cmd)}\n{proc.stdout}{proc.stderr}[exit {proc.returncode}]\n"
                )
            if proc.returncode != 0:
                raise EnvError(
                    f"{NAME}: building the environment for {what} failed at {step}: "
                    f"{uvenv.uv_reason(proc.stderr)} (full log: {dest / 'build.log'})"
                )
        _tiktoken_dir(venv)  # a build without the tables is no good offline
        seconds = round(time.monotonic() - start, 1)
        size = uvenv.dir_size(tmp)
        stamp = {
            "lock_hash": key,
            "tree": tree.label,
            "commit": tree.commit,
            "python": str(python312),
            "uv": str(uv),
            "test_pins": pins,
            **({"peer": PEER_GROUP} if peer else {}),
            "build_seconds": seconds,
            "size_bytes": size,
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
    log(f"{NAME}: environment {key} built in {seconds:.1f} s, {size / 1e6:.0f} MB")
    return LightspeedEnv(
        root=dest,
        python=dest / "venv" / "bin" / "python",
        lock_hash=key,
        build_seconds=seconds,
        size_bytes=size,
        tiktoken_dir=_tiktoken_dir(dest / "venv"),
    )


def _locked(tree: LightspeedTree) -> set[str]:
    """The (normalized) names of every package the tree's uv.lock holds."""
    try:
        lock = tomllib.loads((tree.root / "uv.lock").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise EnvError(f"{NAME}: cannot read {tree.label}'s uv.lock ({exc})") from None
    return {canonicalize_name(str(p.get("name", ""))) for p in lock.get("package", [])}


def _run(cmd: list[str], cwd: Path | None) -> subprocess.CompletedProcess[str]:
    return uvenv.run(cmd, cwd)


def _tiktoken_dir(venv: Path) -> Path:
    found = sorted(venv.glob(f"lib/python3*/site-packages/{TOKENIZERS}"))
    if not found:
        raise EnvError(
            f"{NAME}: {venv} has no litellm tokenizer tables ({TOKENIZERS}); "
            "tiktoken would download them and fails offline"
        )
    if not (found[0] / CL100K).is_file():
        raise EnvError(f"{NAME}: {found[0]} has no cl100k_base table ({CL100K})")
    return found[0]


def _probe(candidate: str) -> Path | None:
    """The real executable of a Python 3.12 command, or None."""
    exe = shutil.which(candidate)
    if exe is None:
        return None
    code = "import sys; print(sys.executable); print('%d.%d' % sys.version_info[:2])"
    try:
        proc = subprocess.run(
            [exe, "-c", code], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    out = proc.stdout.split("\n")
    if proc.returncode != 0 or len(out) < 2 or out[1].strip() != "3.12":
        return None
    return Path(out[0].strip() or exe)


def _by_version(path: Path) -> tuple[int, Version]:
    try:
        return 1, Version(path.parents[1].name)
    except InvalidVersion:
        return 0, Version("0")
