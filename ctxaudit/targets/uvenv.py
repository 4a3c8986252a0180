"""What every target built in its own environment shares: uv, ctxaudit's test pins,
a lock between processes, a build step's command, the reason uv gives when it fails,
and what a child in such an environment needs on its path to import ctxaudit.

A target's environment module (``lightspeed/env.py``, ``langchain/env.py``) says what
goes into its environment; this module only runs uv and reads what it answers.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from packaging.utils import canonicalize_name

from ctxaudit import paths, procs
from ctxaudit.paths import REPO_ROOT
from ctxaudit.targets.base import TargetError

REQUIREMENTS_LOCK = REPO_ROOT / "requirements.lock"
#: installed into every target environment, at requirements.lock's versions (coverage:
#: the mutation report's branch coverage runs the suite under coverage.py there)
TEST_PINS = ("hypothesis", "pytest", "coverage")
PROXIES = frozenset(
    {"http_proxy", "https_proxy", "ftp_proxy", "all_proxy", "no_proxy", "socks_proxy"}
)
#: never inherited by a child that runs in a target's environment
NOT_INHERITED = frozenset(
    {
        "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "VIRTUAL_ENV",
        "PYTHONDONTWRITEBYTECODE",  # bytecode is kept, in the environment's own folder
        "OPENAI_BASE_URL", "OPENAI_API_BASE",  # a child must never reach a real LLM by accident
    }
)  # fmt: skip


class EnvError(TargetError):
    """An environment that cannot be found or built. One line."""


def find_uv(name: str) -> Path:
    """The ``uv`` of this interpreter's environment, else ``uv`` on PATH."""
    beside = Path(sys.executable).parent / "uv"
    if beside.is_file() and os.access(beside, os.X_OK):
        return beside
    on_path = shutil.which("uv")
    if on_path:
        return Path(on_path)
    raise EnvError(
        f"{name}: uv not found (beside {sys.executable} or on PATH); it is pinned in "
        "requirements.lock: `bin/ctxaudit test --co -q` sets up .venv with it"
    )


def test_pins(name: str, lock: Path = REQUIREMENTS_LOCK) -> list[str]:
    """``name==version`` of each of TEST_PINS, as ``lock`` pins it."""
    pins: dict[str, str] = {}
    try:
        text = lock.read_text(encoding="utf-8")
    except OSError as exc:
        raise EnvError(f"{name}: cannot read {lock} ({exc.strerror})") from None
    for line in text.splitlines():
        m = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([^\s;#]+)", line)
        if m and canonicalize_name(m.group(1)) in TEST_PINS:
            pins[canonicalize_name(m.group(1))] = f"{m.group(1)}=={m.group(2)}"
    missing = [pin for pin in TEST_PINS if pin not in pins]
    if missing:
        raise EnvError(f"{name}: {lock} pins no {', '.join(missing)}")
    return [pins[pin] for pin in TEST_PINS]


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock between processes (flock on ``path``)."""
    with path.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def inherited_environ() -> dict[str, str]:
    """This process's environment without proxies and what must not reach a child."""
    return {
        k: v for k, v in os.environ.items() if k.lower() not in PROXIES and k not in NOT_INHERITED
    }


def import_roots() -> list[str]:
    """The folders a child that runs in a target's environment needs on ``PYTHONPATH``
    to import ctxaudit's packages (``ctxaudit``, ``model``, ``ledger``, ``mutation``,
    ``tests``), and nothing else of this interpreter's environment.

    In a checkout that is the checkout. An installed ctxaudit's root (its copy of the
    suites) has no ``ctxaudit`` package: the installed one is in site-packages, beside
    every other package of the caller's environment, so that folder is never put on
    the path; a folder holding only a link to the ``ctxaudit`` package is
    (:func:`ctxaudit_shim`)."""
    if paths.IN_CHECKOUT:
        return [str(REPO_ROOT)]
    return [str(REPO_ROOT), str(ctxaudit_shim())]


def import_environ() -> dict[str, str]:
    """What a child that imports ctxaudit from :func:`import_roots` needs besides:
    an installed build's home, so that the child finds the same copy of the suites
    (without asking ``platformdirs``, which a target's environment does not have)."""
    return {} if paths.IN_CHECKOUT else {"CTXAUDIT_HOME": str(paths.home())}


def ctxaudit_shim() -> Path:
    """A folder with only a link named ``ctxaudit`` to this installation's package, one
    per installation (two environments may install different builds of one version)."""
    package = paths.HERE
    key = hashlib.sha256(str(package).encode()).hexdigest()[:16]
    cache = paths.target_cache()
    dest = cache / "ctxaudit-import" / key
    dest.mkdir(parents=True, exist_ok=True)
    link = dest / "ctxaudit"
    if not link.is_symlink() or link.resolve() != package:
        staged = dest / f".ctxaudit-{os.getpid()}"
        staged.unlink(missing_ok=True)
        staged.symlink_to(package, target_is_directory=True)
        staged.replace(link)  # atomic: a concurrent child never sees no link
    return dest


def run(cmd: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """One build or download step (uv never downloads an interpreter), stopped with the
    audit (:func:`ctxaudit.procs.run`); a command that cannot start answers exit 127
    with the reason, like a shell."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX")}
    env.update(NO_COLOR="1", UV_NO_PROGRESS="1", UV_PYTHON_DOWNLOADS="never")
    return procs.run(cmd, env, cwd)


_PACKAGE_PATTERNS = (
    re.compile(r"Failed to (?:build|download|install|fetch|prepare|extract)\s+`([^`]+)`"),
    re.compile(r"[Hh]ash mismatch for `([^`]+)`"),
    re.compile(
        r"\bno (?:matching )?versions? of ([A-Za-z0-9][A-Za-z0-9._\[\]-]*(?:[=<>!~]=?[^\s,]+)?)"
    ),
    re.compile(r"\bBecause ([A-Za-z0-9][A-Za-z0-9._-]*) was not found"),
)


def uv_reason(stderr: str) -> str:
    """The package uv names in a failure, else its last meaningful line."""
    lines = [_clean(ln) for ln in stderr.splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith(("hint:", "help:"))]
    for pattern in _PACKAGE_PATTERNS:
        for line in lines:
            m = pattern.search(line)
            if m:
                return f"package {m.group(1)}: {line}"
    return lines[-1] if lines else "uv gave no message"


def _clean(line: str) -> str:
    line = re.sub(r"\x1b\[[0-9;]*m", "", line).strip()
    line = line.lstrip("×│├╰─▶ ").strip()
    for prefix in ("error:", "Caused by:"):
        line = line.removeprefix(prefix).strip()
    return line


def dir_size(root: Path) -> int:
    """The bytes of every file under ``root`` (links not followed)."""
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_size
    return total
