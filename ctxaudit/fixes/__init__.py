"""Fixes: for each known finding, the smallest change to the target's source that
makes its property hold, in one or more forms, each for the text of some trees.

A fix is one or more *forms*; a form has either exact ``old -> new`` edits of files in
the tree or a unified diff (``patch``, a file beside the fix's module, applied with
``git apply`` at the tree's root), and names the versions it was written for (a PEP 440 specifier
such as ``>=0.13.0,<0.15.0``, ``*`` for any, or a set of exact versions, tags or commit
prefixes, so a lightspeed-stack tree can use the same format). Each fix lives in its own
module, ``<finding id as a module name>.py``, defining ``FIX``, in its target's
``fixes`` package (``ctxaudit/targets/<target>/fixes/``, :func:`load_fixes`).

Which form a tree gets follows its text, not its name (:func:`choose`): the first form
whose edits all apply wins. The version only orders the tries: the forms that name it
first (in the order declared), then the others, those with more edits first (a form
that makes more of the same change is the more specific one: a 0.6 form that also edits
0.6's second copy of a handler is tried before the form without that copy), in the order
declared among equals. So a tree no form names (a commit after main, an unreleased
version) gets whichever form fits its text, and its fix is verified as any other. When
no form applies, the reason names, per form, the first edit that did not match (its
file and the first line of its ``old`` text).

Fixes are applied to a *copy* of a tree (:func:`fixed_copy`); a fix none of whose forms
applies is reported as :class:`NotApplied`, never raised past :func:`fixed_copy`.

Where no fix of the tree's source can be verified on some versions (the behaviour is
the inference server's, or the upstream fix was a dependency change), the form for
those versions has no edits and a ``reason``. Such a form has no text to match: it is
chosen only for the versions it names (``*``: any), in the order above, and
:func:`fixed_copy` reports it as not applied, with "no fix on this version:" and the
reason. A fix that builds on another (the same writes, one more guard) names it in
``requires``: :func:`fixed_copy` applies that one first, once, when it is not among the
fixes already applied.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import pkgutil
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Edit:
    path: str  # relative to the tree's root
    old: str  # must occur exactly once
    new: str


@dataclass(frozen=True)
class Form:
    versions: str | frozenset[str]  # a specifier ("*" for all), or exact versions/tags/commits
    edits: tuple[Edit, ...] = ()
    patch: str | None = None  # a unified diff (a path), -p1 at the tree's root
    #: no fix on these versions, and why (a form with a reason has no edits)
    reason: str = ""
    #: (path, text): text that must be in the tree's file for the form to apply; changes
    #: nothing. What tells apart trees whose edited lines are the same but not what the
    #: new lines need (the package an added import comes from)
    anchors: tuple[tuple[str, str], ...] = ()
    #: the harness's own tests that pin the bug on a tree this form fixes (node ids
    #: relative to the folder that holds its ``tests/``; one without its parameters
    #: names every parametrization): each is expected to fail with the fix, and the fix
    #: audit names it; any other own test that fails with the fix counts against the fix
    #: (``ctxaudit/fixaudit/own_tests.py``)
    pins: tuple[str, ...] = ()

    def applies(self, version: str) -> bool:
        """Whether this form was written for ``version`` (``*`` included): what orders the
        tries and chooses a form with a ``reason``; never whether its edits apply."""
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

    def names(self, version: str) -> bool:
        """Whether this form names ``version`` (``*`` names none: it narrows nothing)."""
        star = isinstance(self.versions, str) and self.versions.strip() in ("", "*")
        return not star and self.applies(version)

    @property
    def label(self) -> str:
        """The versions it was written for, in words."""
        if isinstance(self.versions, frozenset):
            return "the form for " + ", ".join(sorted(self.versions))
        spec = self.versions.strip()
        return "the form for any version" if spec in ("", "*") else f"the form for {spec}"


@dataclass(frozen=True)
class Fix:
    finding: str
    forms: tuple[Form, ...]
    why: str = ""  # what the change does, in one sentence
    #: findings whose fix this one builds on: applied first (once), where not applied yet
    requires: tuple[str, ...] = ()
    #: the package it was loaded from (:func:`load_fixes`), where ``requires`` are found
    package: str = field(default="", compare=False)

    def form_for(self, version: str) -> Form | None:
        """The first form written for ``version`` (by its name alone: :func:`choose` is
        what picks the form a tree gets)."""
        for form in self.forms:
            if form.applies(version):
                return form
        return None

    def tries(self, version: str) -> list[Form]:
        """Every form, in the order :func:`choose` tries them for ``version``: those that
        name it, as declared; then the rest, more edits first, as declared among equals."""
        named = [f for f in self.forms if f.names(version)]
        rest = [f for f in self.forms if not f.names(version)]
        rest.sort(key=lambda f: -(len(f.edits) + (f.patch is not None)))  # stable
        return named + rest


class NotApplied(Exception):
    """A fix that does not apply to a tree; the message says where and why."""


def load_fixes(package: str) -> dict[str, Fix]:
    """Every fix in ``package`` (one module per finding, each defining ``FIX``), by
    finding id. The registry (``ctxaudit.targets.fixes``) asks every target's."""
    fixes: dict[str, Fix] = {}
    where = importlib.import_module(package)
    for info in pkgutil.iter_modules(list(where.__path__)):
        module = importlib.import_module(f"{package}.{info.name}")
        fix = getattr(module, "FIX", None)
        if isinstance(fix, Fix):
            fixes[fix.finding] = dataclasses.replace(fix, package=package)
    return fixes


def _staged(form: Form, root: Path) -> dict[Path, str]:
    """The files ``form`` changes, with its edits made (in memory); raises NotApplied
    naming the first edit that does not match, or a patch that does not apply."""
    staged: dict[Path, str] = {}
    for n, edit in enumerate(form.edits, 1):
        which = f"edit {n} of {len(form.edits)}, {edit.path}"
        path = root / edit.path
        if not path.is_file():
            raise NotApplied(f"{which}: no such file in the tree")
        text = staged.get(path, path.read_text(encoding="utf-8"))
        count = text.count(edit.old)
        if count == 0:
            n_line, line = _first_line_not_found(edit.old, text)
            raise NotApplied(
                f"{which}: the text to replace is not found (its line {n_line} of "
                f"{len(edit.old.splitlines())} is where it stops matching: {line[:80]!r})"
            )
        if count > 1:
            first = edit.old.strip().splitlines()[0][:80] if edit.old.strip() else ""
            raise NotApplied(f"{which}: the text to replace is found {count} times ({first!r})")
        staged[path] = text.replace(edit.old, edit.new)
    for n, (rel, needed) in enumerate(form.anchors, 1):
        which = f"anchor {n} of {len(form.anchors)}, {rel}"
        if not (root / rel).is_file():
            raise NotApplied(f"{which}: no such file in the tree")
        if needed not in (root / rel).read_text(encoding="utf-8"):
            raise NotApplied(f"{which}: the form needs {needed.strip()[:80]!r}, not in the file")
    if form.patch is not None:
        patch = Path(form.patch)
        check = subprocess.run(
            ["git", "apply", "--check", "-p1", str(patch)],
            cwd=root, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if not patch.is_file() or check.returncode != 0:
            reason = (check.stderr or "no such patch file").strip().splitlines()
            raise NotApplied(f"{form.patch}: {reason[0] if reason else 'does not apply'}")
    return staged


def _first_line_not_found(old: str, text: str) -> tuple[int, str]:
    """The first line of ``old`` (1-based, and its text stripped) where ``old`` stops
    being found in ``text``: the lines before it occur there in sequence, with it they
    do not."""
    lines = old.splitlines(keepends=True)
    for n in range(1, len(lines) + 1):
        if "".join(lines[:n]) not in text:
            return n, lines[n - 1].strip()
    return len(lines), lines[-1].strip() if lines else ""


def check_form(form: Form, root: Path) -> str:
    """Why ``form``'s edits do not all apply to the tree at ``root`` ("" when they do);
    changes nothing. A form with a ``reason`` has nothing to apply: ``"no edits"``."""
    if form.reason or not (form.edits or form.patch):
        return "no edits"
    return _why_not(lambda: _staged(form, root))


def _why_not(attempt: Callable[[], object]) -> str:
    """Why ``attempt`` (staging or applying a form) failed, "" when it did not."""
    try:
        attempt()
    except NotApplied as exc:
        return str(exc)
    except (OSError, subprocess.SubprocessError, UnicodeDecodeError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return ""


def choose(fix: Fix, root: Path, version: str) -> Form:
    """The form of ``fix`` the tree at ``root`` gets (see the module docstring): the
    first, in :meth:`Fix.tries` order, whose edits all apply, or whose ``reason`` is
    written for ``version``. Raises NotApplied naming, per form, why it does not."""
    misses: list[str] = []
    for form in fix.tries(version):
        if form.reason:
            if form.applies(version):
                return form
            misses.append(f"{form.label}: no fix on its versions, not written for {version}")
            continue
        why = check_form(form, root)
        if not why:
            return form
        misses.append(f"{form.label}: {why}")
    if not misses:
        raise NotApplied("the fix has no form")
    raise NotApplied(f"no form of the fix applies to this tree ({version}): " + "; ".join(misses))


def apply_form(form: Form, root: Path) -> list[str]:
    """Apply one form to the tree at ``root`` (in place): all of it or nothing.
    Returns the files changed; raises NotApplied."""
    staged = _staged(form, root)
    changed = [str(p.relative_to(root)) for p in staged]
    for path, text in staged.items():
        path.write_text(text)
    if form.patch is not None:
        subprocess.run(
            ["git", "apply", "-p1", str(form.patch)], cwd=root, check=True,
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
    """Copy the tree to ``dest`` and apply each fix in turn, each the form its text
    takes (:func:`choose`, on the tree as the fixes before it left it). A fix that does
    not apply is recorded in ``failed``; the others still apply."""
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
    every = load_fixes(fix.package) if fix.package else {}
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
    """Apply the form of ``fix`` that ``dest`` takes; why not ("" when it applied)."""
    try:
        form = choose(fix, dest, version)
    except NotApplied as exc:
        return str(exc)
    if form.reason:
        return f"no fix on this version: {form.reason}"
    return _why_not(lambda: apply_form(form, dest))


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
            a, b = old.read_text(encoding="utf-8"), path.read_text(encoding="utf-8")
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
