"""A target version as the mutation run needs it: its folder, version, work copy and runtime.

The target (``ctxaudit.targets``) answers; this module only puts its answer in the form
the runner uses, and says whether the tree is a developer's (``developer_tree``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mutation import driver
from mutation.engine import MutationError


@dataclass(frozen=True)
class Resolved:
    """A target version as the mutation run needs it."""

    root: Path  # the folder whose files its mutation.toml names
    version: str
    copy_dir: str  # what the work copy holds ("." = all of root)
    #: the interpreter the worker runs in and the worker's environment for a work
    #: copy (None: this interpreter and environment, the target's package pinned)
    runtime: driver.Runtime | None = None
    #: a developer's tree, not a registered version: a named mutant whose code is gone
    #: from it is reported, not an error (:func:`developer_tree`)
    developer: bool = False


def resolve_target(target: str, tree_or_spec: str | None) -> tuple[Path, str, str]:
    """(root that holds the package, version, folder to copy) for a target spec."""
    found = resolve(target, tree_or_spec)
    return found.root, found.version, found.copy_dir


def resolve(target: str, tree_or_spec: str | None) -> Resolved:
    """Ask the target (``ctxaudit.targets``) for the version a spec names."""
    from ctxaudit import targets

    try:
        kind = targets.get(target)
        found = kind.resolve(tree_or_spec or None)
    except targets.TargetError as exc:
        raise MutationError(str(exc)) from None
    if found.copy_dir is None or kind.mutation is None:
        raise MutationError(f"{target}: not a mutation target")
    from mutation.runtime import runtime_for

    return Resolved(
        found.mutation_root,
        found.version,
        found.copy_dir,
        runtime_for(kind, found, None),
        developer_tree(found),
    )


def developer_tree(found: Any) -> bool:
    """Whether a resolved target version is a developer's tree rather than a registered
    version the catalogue is written for (the rule: ``mutation/catalogue.py``).

    Registered: a version the target resolves by name, i.e. a gitreins release (the pin
    or the index) or a lightspeed-stack tag or commit of its repository (their trees'
    ``origin``). A developer's: a tree given as a path (``origin == "path"``, the only
    trees ``--since`` takes besides the ledger), and the ledger, which has no releases:
    it is this repository's code under development (``tree`` None)."""
    origin = getattr(found.tree, "origin", None)
    return origin is None or origin == "path"
