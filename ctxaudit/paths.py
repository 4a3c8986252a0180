"""Where ctxaudit's own files are: the root that holds ``model/``, ``ledger/``,
``mutation/`` and ``tests/``, which its runs read and under which they keep their
caches (``.cache/``) and the mutation runner's work copies.

- In a checkout (an editable install included) it is the checkout.
- Installed from a wheel, the suites ship as package data (``ctxaudit/_suite``, see
  setup.py) and are copied once per installed build into the user's cache folder
  (``platformdirs``; ``$CTXAUDIT_HOME`` overrides it): that copy is the root, so a run
  never writes into the installation.

Nothing here touches ``sys.path``: only ctxaudit's own command line puts the root on it
(:func:`use_root`), never a process it is imported into (the pytest plugin's).

Importing this never fails on a home that cannot be used (``$CTXAUDIT_HOME`` a file, a
folder that cannot be made, read-only): ``--version`` and ``--help`` need no home. A
command that runs checks it first (:func:`home_problem`, :func:`require_home`): one
line, exit 2, before anything runs, rather than a finished run's verdicts lost to a
cache it cannot write.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: the suites an installed ctxaudit ships (absent in a checkout)
SHIPPED = HERE / "_suite"


def _checkout() -> Path | None:
    root = HERE.parent
    if all((root / part).is_dir() for part in ("model", "ledger", "mutation", "tests")):
        return root
    return None


def home() -> Path:
    """The folder an installed ctxaudit keeps its copies of the suites in."""
    given = os.environ.get("CTXAUDIT_HOME", "").strip()
    if given:
        return Path(given).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("ctxaudit"))


def _home_named() -> str:
    """The home as a message names it: the variable that set it, or where it came from."""
    if os.environ.get("CTXAUDIT_HOME", "").strip():
        return f"CTXAUDIT_HOME {home()}"
    return f"ctxaudit's home {home()} (the user cache folder; CTXAUDIT_HOME sets another)"


def _shipped_digest() -> str:
    """What tells one installed build's suites from another's (same version, rebuilt)."""
    h = hashlib.sha256()
    for path in sorted(SHIPPED.rglob("*")):
        if path.is_file():
            stat = path.stat()
            h.update(f"{path.relative_to(SHIPPED).as_posix()}\0{stat.st_size}\0".encode())
            h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()[:16]


def _materialized() -> Path:
    """The installed build's copy of its suites in :func:`home`, made once (whole or
    not at all: copied beside it, then renamed into place)."""
    if not SHIPPED.is_dir():
        raise RuntimeError(
            f"ctxaudit at {HERE} has neither a checkout around it nor its suites "
            "(ctxaudit/_suite): reinstall it from a wheel or a checkout"
        )
    root = home() / f"root-{_shipped_digest()}"
    if (root / "tests").is_dir():
        return root
    root.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix="root-", dir=root.parent))
    try:
        shutil.copytree(SHIPPED, staging, dirs_exist_ok=True)
    except OSError as exc:  # a full or read-only home: nothing half-copied stays
        shutil.rmtree(staging, ignore_errors=True)
        raise OSError(exc.errno, _first_reason(exc)) from None
    try:
        staging.rename(root)
    except OSError:  # another process made it first
        shutil.rmtree(staging, ignore_errors=True)
    return root


def _first_reason(exc: OSError) -> str:
    """One short reason for a failed copy: ``shutil.Error`` carries one entry per file
    that failed (on a full disk, every file after the first: a message of 157 KB)."""
    if isinstance(exc, shutil.Error) and exc.args and isinstance(exc.args[0], list):
        errors = exc.args[0]
        if errors:
            _src, dst, why = errors[0]
            more = f" and {len(errors) - 1} more file(s)" if len(errors) > 1 else ""
            return f"{why} (copying to {dst}{more})"
    return exc.strerror or str(exc)


def _root() -> tuple[Path, str | None]:
    """The root, and why the home cannot hold it (None: it can). A home that cannot be
    used leaves the root where it would be (absent): nothing is read from or written
    into the installation in its place."""
    checkout = _checkout()
    if checkout is not None:
        return checkout, None
    try:
        return _materialized(), None
    except OSError as exc:
        where = home() / "root"
        why = "not a folder" if home().is_file() else (exc.strerror or str(exc))
        return where, f"{_home_named()}: cannot hold ctxaudit's files ({why})"


#: the root of ctxaudit's files (a checkout, or an installed build's copy)
REPO_ROOT, _HOME_PROBLEM = _root()
#: ``REPO_ROOT`` is a checkout (a developer's), not an installed build's copy
IN_CHECKOUT = HERE.parent == REPO_ROOT


def target_cache() -> Path:
    """Where the targets' trees and environments are kept: ``$CTXAUDIT_CACHE`` when set
    (one cache shared by several checkouts or installations), else the root's
    ``.cache``."""
    given = os.environ.get("CTXAUDIT_CACHE", "").strip()
    return Path(given).expanduser() if given else REPO_ROOT / ".cache"


def pycache() -> Path:
    """Where the Python children of ctxaudit's own interpreter keep their bytecode."""
    return target_cache() / "pycache"


def bytecode_environ(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` for a Python child that runs ctxaudit's suites: its bytecode, and
    pytest's rewritten test modules, kept under :func:`pycache` (or the caller's own
    ``PYTHONPYCACHEPREFIX``), never beside a source, whatever ``PYTHONDONTWRITEBYTECODE``
    says. Without it each child compiled every module it imported and rewrote every test
    module it collected: 1.0 s of a short suite's 1.9 s (measured), paid by each of the
    audit's processes (the suite, each replay, each fixed tree)."""
    out = {k: v for k, v in environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out["PYTHONPYCACHEPREFIX"] = environ.get("PYTHONPYCACHEPREFIX") or str(pycache())
    return out


def prune_pycache() -> None:
    """Drop the bytecode kept for files under the temporary folder (the runs' copies
    of trees: never imported again), so the cache does not grow with every run. A run
    still using a copy only compiles it again."""
    for tmp in {Path(tempfile.gettempdir()), Path(tempfile.gettempdir()).resolve()}:
        shutil.rmtree(pycache() / tmp.relative_to(tmp.anchor), ignore_errors=True)


def _unwritable(folder: Path) -> str | None:
    """Why ``folder`` cannot take a new file (made first when missing); None: it can."""
    if folder.exists() and not folder.is_dir():
        return "not a folder"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".ctxaudit-probe-", dir=folder)
    except OSError as exc:
        return exc.strerror or str(exc)
    os.close(fd)
    os.unlink(probe)
    return None


def home_problem(root: Path | None = None) -> str | None:
    """Why ctxaudit cannot work under ``root`` (default: :data:`REPO_ROOT`), in one
    line; None when it can: the root is there, its ``.cache`` (the step cache, the
    mutation runner's copies) and the targets' cache (:func:`target_cache`) each take a
    new file."""
    if root is None and _HOME_PROBLEM is not None:
        return _HOME_PROBLEM
    root = REPO_ROOT if root is None else root
    named = _home_named() if not IN_CHECKOUT else f"the checkout {root}"
    cache = root / ".cache"
    why = _unwritable(cache)
    if why is not None:
        return f"{named}: {cache} is not writable ({why})"
    given = os.environ.get("CTXAUDIT_CACHE", "").strip()
    if given:
        why = _unwritable(target_cache())
        if why is not None:
            what = "cannot hold the targets' trees and environments"
            return f"CTXAUDIT_CACHE {given}: {what} ({why})"
    return None


def require_home() -> None:
    """Exit 2 with one line when :func:`home_problem` finds one: for a command that
    runs (not ``--version`` or ``--help``), before anything runs."""
    why = home_problem()
    if why is not None:
        print(f"ctxaudit: {why}", file=sys.stderr)
        raise SystemExit(2)


def use_root() -> None:
    """Make the root's packages (``model``, ``ledger``, ``mutation``) importable in
    this process: for ctxaudit's own command line only."""
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
