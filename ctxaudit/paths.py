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
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
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
    shutil.copytree(SHIPPED, staging, dirs_exist_ok=True)
    try:
        staging.rename(root)
    except OSError:  # another process made it first
        shutil.rmtree(staging, ignore_errors=True)
    return root


#: the root of ctxaudit's files (a checkout, or an installed build's copy)
REPO_ROOT = _checkout() or _materialized()
#: ``REPO_ROOT`` is a checkout (a developer's), not an installed build's copy
IN_CHECKOUT = HERE.parent == REPO_ROOT


def use_root() -> None:
    """Make the root's packages (``model``, ``ledger``, ``mutation``) importable in
    this process: for ctxaudit's own command line only."""
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
