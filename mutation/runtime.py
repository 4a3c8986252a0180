"""The worker's runtime for a target whose suites run in their own interpreter.

A lightspeed-stack tree runs in its own Python 3.12 environment with its locked
dependencies (the target's ``suite_process``). The worker runs there too, on the
trampolined copy of the target's code: that copy comes first on the path (in place
of the target's own source folder), then ctxaudit (the suite and
``mutation.worker``), then mutmut's trampoline runtime. mutmut is not in the
target's environment; its trampolines need only its pure-Python package and
metadata, which are linked from ctxaudit's own pinned installation, so the
environment is neither changed nor rebuilt.
"""

from __future__ import annotations

import importlib.metadata
import os
import tempfile
from pathlib import Path
from typing import Any

from mutation.driver import Runtime
from mutation.engine import REPO, MutationError


def runtime_for(kind: Any, found: Any, repo: Path | None) -> Runtime | None:
    """None when the target's suites run in this interpreter; else where the worker runs.

    ``kind`` is the target (``ctxaudit.targets.get(name)``), ``found`` its resolved
    version (``Resolved``), ``repo`` the repository it was resolved in (or None).
    """
    from ctxaudit.targets.base import Described

    described = Described(kind.name, found.spec, found.version, repo)
    with tempfile.TemporaryDirectory(prefix="ctxaudit-") as tmp:
        process = kind.suite_process(described, Path(tmp))
    if process is None:
        return None
    python, _ = process
    source = str(found.mutation_root)
    shim = mutmut_shim()

    def environ(work_src: Path) -> dict[str, str]:
        scratch = work_src.parent / "tmp"
        scratch.mkdir(exist_ok=True)
        got = kind.suite_process(described, scratch)
        assert got is not None
        out = dict(got[1])
        # the work copy in place of the target's own source folder
        path = [p for p in out.get("PYTHONPATH", "").split(os.pathsep) if p and p != source]
        out["PYTHONPATH"] = os.pathsep.join([str(work_src), *path, str(REPO), str(shim)])
        return out

    # the interpreter's path names its environment (for lightspeed-stack: the lock's hash)
    return Runtime(python, python, environ)


def mutmut_shim() -> Path:
    """A folder with only mutmut's package and metadata (links to this interpreter's)."""
    dist = importlib.metadata.distribution("mutmut")
    version = dist.version
    site = Path(str(dist.locate_file("")))
    package = site / "mutmut"
    info = next(site.glob(f"mutmut-{version}.dist-info"), None)
    if not (package / "__init__.py").is_file() or info is None:
        raise MutationError(f"mutmut {version}: no package or metadata under {site}")
    dest = REPO / ".cache" / "mutation-mutmut" / version
    dest.mkdir(parents=True, exist_ok=True)
    for src in (package, info):
        link = dest / src.name
        if not link.is_symlink() or link.resolve() != src.resolve():
            link.unlink(missing_ok=True)
            link.symlink_to(src.resolve(), target_is_directory=True)
    return dest
