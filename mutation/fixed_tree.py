"""``--fix``: the tree to mutate with some of its known findings fixed.

A copy of the target's tree with the named fixes (its ``fixes`` package) applied,
beside the work copy, and the findings whose regions the suites leave out narrowed to
those not fixed, so the fixed findings' regions are checked. See mutation/README.md (``--fix``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mutation.engine import MutationError
from mutation.resolve import Resolved, resolve


def fixed_tree(
    target: str, tree_or_spec: str | None, fixes: Sequence[str], dest: Path
) -> tuple[Resolved, list[str]]:
    """``--fix``: a copy of the tree at ``dest`` with the named fixes applied
    (the target's fixes; ``all``: the fix of each of the target's known findings that
    has edits for this version), as the target
    version to mutate, and the fixes applied. The copy runs as the tree it was made from
    (the same environment; the work copy takes the tree's source folder's place). A fix
    that is unknown, has no edits for this version or does not apply is an error: a
    partly fixed tree is never mutated in its place."""
    from ctxaudit import fixes as fixlib
    from ctxaudit import targets

    kind = targets.get(target)
    try:
        found = kind.resolve(tree_or_spec or None)
    except targets.TargetError as exc:
        raise MutationError(str(exc)) from None
    version = kind.fix_version(found)
    chosen = _chosen_fixes(kind, fixes, target, version)
    original = resolve(target, tree_or_spec)
    try:
        inside = original.root.resolve().relative_to(found.root.resolve())
    except ValueError:
        raise MutationError(f"{target}: its mutation root is not inside its tree") from None
    got = fixlib.fixed_copy(found.root, dest, version, chosen)
    if got.failed:
        why = "; ".join(f"{fid}: {reason}" for fid, reason in got.failed.items())
        raise MutationError(f"a fix does not apply to {target} {version}: {why}")
    fixed = Resolved(
        dest / inside, original.version, original.copy_dir, original.runtime, original.developer
    )
    return fixed, got.applied


def _chosen_fixes(kind: Any, fixes: Sequence[str], target: str, version: str) -> list[Any]:
    """The fixes ``--fix`` names (``all``: the target's own findings' fixes that have
    edits for ``version``), each once; an unknown fix, one with no edits for the version
    or an empty choice is an error."""
    from ctxaudit import targets

    named = f"{target} {version}"
    every = targets.fixes()
    if list(fixes) == ["all"]:
        own = [f.id for f in kind.findings()]  # fixes are named by finding, not target
        chosen = [every[f] for f in own if f in every and _has_edits(every[f], version)]
    else:
        unknown = [f for f in fixes if f not in every]
        if unknown:
            raise MutationError(f"--fix {', '.join(unknown)}: no such fix in any target's fixes")
        chosen = [every[f] for f in dict.fromkeys(fixes)]
        no_form = [f.finding for f in chosen if not _has_edits(f, version)]
        if no_form:
            raise MutationError(f"--fix {', '.join(no_form)}: no form with edits for {named}")
    if not chosen:
        raise MutationError(f"--fix all: no fix has a form with edits for {named}")
    return chosen


def _has_edits(fix: Any, version: str) -> bool:
    form = fix.form_for(version)
    return form is not None and not form.reason and bool(form.edits or form.patch)


def leave_out_unfixed(target: str, version: str, applied: Sequence[str]) -> None:
    """A target whose suites leave out the regions named in ``CTXAUDIT_FINDINGS`` (or,
    unset, its registered findings' for the version) leaves out all but the fixed ones."""
    from ctxaudit import targets

    kind = targets.get(target)
    if not kind.excludes_known:
        return  # its suites find what reproduces on the unmutated (fixed) copy themselves
    given = os.environ.get("CTXAUDIT_FINDINGS")
    if given is None:
        ids = kind.left_out(version)
    else:
        ids = [i.strip() for i in given.split(",") if i.strip() not in ("", "none")]
    os.environ["CTXAUDIT_FINDINGS"] = ",".join(i for i in ids if i not in applied) or "none"
