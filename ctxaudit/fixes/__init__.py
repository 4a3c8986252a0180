"""Fixes: for each known finding, the smallest change to the target's source that
makes its property hold, with the versions each form applies to.

A fix is one or more *forms*; a form names the versions it applies to (a PEP 440
specifier such as ``>=0.13.0,<0.15.0``, or a set of exact versions, tags or commit
prefixes, so a lightspeed-stack tree can use the same format) and either exact
``old -> new`` edits of files in the tree or a unified diff (``patch``, a file in
this folder, applied with ``git apply`` at the tree's root). Each fix lives in its
own module here, ``<finding id as a module name>.py``, defining ``FIX``.

Fixes are applied to a *copy* of a tree (:func:`fixed_copy`); a form that does not
apply (an ``old`` text that is not there exactly once, a patch that does not apply)
is reported as :class:`NotApplied`, never raised past :func:`fixed_copy`.

Where no fix of the tree's source can be verified on some versions (the behaviour is
the inference server's, or the upstream fix was a dependency change), the form for
those versions has no edits and a ``reason``: :func:`fixed_copy` reports it as not
applied, with "no fix on this version:" and the reason. A fix that builds on another
(the same writes, one more guard) names it in ``requires``: :func:`fixed_copy` applies
that one first, once, when it is not among the fixes already applied.
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Edit:
    path: str  # relative to the tree's root
    old: str  # must occur exactly once
    new: str


@dataclass(frozen=True)
class Form:
    versions: str | frozenset[str]  # a specifier ("*" for all), or exact versions/tags/commits
    edits: tuple[Edit, ...] = ()
    patch: str | None = None  # a unified diff in this folder, -p1 at the tree's root
    #: no fix on these versions, and why (a form with a reason has no edits)
    reason: str = ""

    def applies(self, version: str) -> bool:
        if isinstance(self.versions, frozenset):
            return any(version == v or version.startswith(v) for v in self.versions)
        if self.versions.strip() in ("", "*"):
            return True
        from packaging.specifiers import InvalidSpecifier, SpecifierSet
        from packaging.version import InvalidVersion, Version

        try:
            return Version(version) in SpecifierSet(self.versions)
        except (InvalidSpecifier, InvalidVersion):
            return False


@dataclass(frozen=True)
class Fix:
    finding: str
    forms: tuple[Form, ...]
    why: str = ""  # what the change does, in one sentence
    #: findings whose fix this one builds on: applied first (once), where not applied yet
    requires: tuple[str, ...] = ()

    def form_for(self, version: str) -> Form | None:
        for form in self.forms:
            if form.applies(version):
                return form
        return None


class NotApplied(Exception):
    """A fix that does not apply to a tree; the message says where and why."""


def load_all() -> dict[str, Fix]:
    """Every fix in this package, by finding id."""
    fixes: dict[str, Fix] = {}
    for info in pkgutil.iter_modules([str(HERE)]):
        module = importlib.import_module(f"{__name__}.{info.name}")
        fix = getattr(module, "FIX", None)
        if isinstance(fix, Fix):
            fixes[fix.finding] = fix
    return fixes


def apply_form(form: Form, root: Path) -> list[str]:
    """Apply one form to the tree at ``root`` (in place): all of it or nothing.
    Returns the files changed; raises NotApplied."""
    staged: dict[Path, str] = {}
    for edit in form.edits:
        path = root / edit.path
        if not path.is_file():
            raise NotApplied(f"{edit.path}: no such file in the tree")
        text = staged.get(path, path.read_text())
        count = text.count(edit.old)
        if count != 1:
            first = edit.old.strip().splitlines()[0][:80] if edit.old.strip() else ""
            where = "not found" if count == 0 else f"found {count} times"
            raise NotApplied(f"{edit.path}: the text to replace is {where} ({first!r})")
        staged[path] = text.replace(edit.old, edit.new)
    changed = [str(p.relative_to(root)) for p in staged]
    if form.patch is not None:
        patch = HERE / form.patch
        check = subprocess.run(
            ["git", "apply", "--check", "-p1", str(patch)],
            cwd=root, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if not patch.is_file() or check.returncode != 0:
            reason = (check.stderr or "no such patch file").strip().splitlines()
            raise NotApplied(f"{form.patch}: {reason[0] if reason else 'does not apply'}")
    for path, text in staged.items():
        path.write_text(text)
    if form.patch is not None:
        subprocess.run(
            ["git", "apply", "-p1", str(HERE / form.patch)], cwd=root, check=True,
            capture_output=True,
        )  # fmt: skip
        changed.append(form.patch)
    return changed


def copy_tree(root: Path, dest: Path, version: str) -> Path:
    """A copy of a target tree that the adapters accept as the same version. A tree
    installed in site-packages (the pinned gitreins) copies only its own packages."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".git")
    if (root / "engine").is_dir() and root.name == "site-packages":
        dest.mkdir(parents=True)
        shutil.copytree(root / "engine", dest / "engine", ignore=ignore)
        (dest / "PKG-INFO").write_text(
            f"Metadata-Version: 2.1\nName: gitreins\nVersion: {version}\n"
        )
    else:
        shutil.copytree(root, dest, ignore=ignore, symlinks=True)
    return dest


@dataclass
class Applied:
    root: Path
    applied: list[str] = field(default_factory=list)  # finding ids
    failed: dict[str, str] = field(default_factory=dict)  # finding id -> why not


def fixed_copy(
    root: Path, dest: Path, version: str, fixes: list[Fix], copy: bool = True
) -> Applied:
    """Copy the tree to ``dest`` and apply each fix's form for ``version`` in turn.
    A fix that does not apply is recorded in ``failed``; the others still apply."""
    if copy:
        copy_tree(root, dest, version)
    result = Applied(dest)
    done: set[str] = set()  # fixes applied, a required one included
    for fix in fixes:
        if fix.finding in done:
            result.applied.append(fix.finding)
            continue
        needed = [*_required(fix, version), fix]
        failed = ""
        for need in needed:
            if need.finding in done:
                continue
            why = _apply_one(need, dest, version)
            if why:
                failed = why if need is fix else f"the fix it requires ({need.finding}): {why}"
                break
            done.add(need.finding)
        if failed:
            result.failed[fix.finding] = failed
        else:
            result.applied.append(fix.finding)
    return result


def _required(fix: Fix, version: str) -> list[Fix]:
    """The fixes ``fix`` builds on (``requires``), theirs first."""
    if not fix.requires:
        return []
    every = load_all()
    out: list[Fix] = []
    for fid in fix.requires:
        need = every.get(fid)
        if need is None:
            continue
        out += [f for f in _required(need, version) if f not in out]
        if need not in out:
            out.append(need)
    return out


def _apply_one(fix: Fix, dest: Path, version: str) -> str:
    """Apply ``fix``'s form for ``version`` to ``dest``; why not ("" when it applied)."""
    form = fix.form_for(version)
    if form is None:
        return f"no form of the fix for version {version}"
    if form.reason:
        return f"no fix on this version: {form.reason}"
    try:
        apply_form(form, dest)
    except NotApplied as exc:
        return str(exc)
    except (OSError, subprocess.SubprocessError, UnicodeDecodeError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return ""


def diff_trees(before: Path, after: Path, label: str = "") -> str:
    """The unified diff (-p1, ``a/`` and ``b/``) from one tree to its fixed copy:
    what upstream would receive. Only files that differ, text files only."""
    out: list[str] = []
    for path in sorted(after.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        rel = path.relative_to(after)
        old = before / rel
        if not old.is_file() or rel.name == "PKG-INFO":
            continue
        try:
            a, b = old.read_text(), path.read_text()
        except UnicodeDecodeError:
            continue
        if a != b:
            out.extend(
                difflib.unified_diff(
                    a.splitlines(keepends=True),
                    b.splitlines(keepends=True),
                    f"a/{rel}",
                    f"b/{rel}",
                )
            )
    text = "".join(out)
    return (f"# {label}\n" + text) if label and text else text
