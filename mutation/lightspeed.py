"""lightspeed-stack as a mutation target: the tree, its environment, the worker's runtime.

A lightspeed-stack tree runs in its own Python 3.12 environment
(``ctxaudit/targets/lightspeed/env.py``). The worker runs there too, on the
trampolined copy of the tree's ``src/``: that copy comes first on the path, then
ctxaudit (the suite and ``mutation.worker``), then mutmut's trampoline runtime.
mutmut is not in the tree's lock; its trampolines need only its pure-Python
package and metadata, which are linked from ctxaudit's own pinned installation,
so the environment is neither changed nor rebuilt.
"""

from __future__ import annotations

import importlib.metadata
import os
from pathlib import Path

from mutation.driver import Runtime
from mutation.engine import REPO, MutationError

NAME = "lightspeed-stack"


def resolve_tree(spec: str | None) -> tuple[Path, str, Runtime]:
    """(the tree's src folder, version label, runtime) for a spec; the repository
    comes from ``CTXAUDIT_LIGHTSPEED_REPO`` (``--lightspeed-repo`` of the CLI)."""
    from ctxaudit.targets.lightspeed import env as lsenv
    from ctxaudit.targets.lightspeed import runner
    from ctxaudit.targets.lightspeed import tree as lstree

    try:
        tree = lstree.resolve(spec or "", lstree.repo_from(None))
        env = lsenv.ensure_env(tree)
    except lstree.TargetError as exc:
        raise MutationError(str(exc)) from None
    shim = mutmut_shim()
    version = tree.label.removeprefix(f"{NAME}-")

    def environ(work_src: Path) -> dict[str, str]:
        scratch = work_src.parent / "tmp"
        scratch.mkdir(exist_ok=True)
        out = runner.child_env(env, tree, {"TMPDIR": str(scratch)})
        out["PYTHONPATH"] = os.pathsep.join([str(work_src), str(REPO), str(shim)])
        return out

    return tree.root / "src", version, Runtime(str(env.python), env.lock_hash, environ)


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
