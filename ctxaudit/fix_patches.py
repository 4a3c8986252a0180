"""Where the fix audit's patches live: once per target, named by their text.

A fix's patch is often the same on several versions of a target (the same edit to the
same lines). Each patch is written once, to ``<reports>/<target>-fixes/<name>-<digest>
.patch`` (``<name>`` the finding's id, or ``combined`` for the fully fixed tree's;
``<digest>`` the first 12 hex digits of the text's sha256), and each version's report
refers to it by a link relative to the version's folder
(``../<target>-fixes/<name>-<digest>.patch``): identical text, one file.

A patch no report refers to any more (a fix that changed) is removed by :func:`prune`,
which the audit runs once every version is done. Two audits may share a report folder
at once: a process claims each patch it writes (``<reports>/.ctxaudit-claims/<pid>-
<start>/``) before writing it, and :func:`prune` keeps every patch a live process other
than its own claimed (that process's report, which will link it, may not be written
yet); the claims of processes that have ended are removed by the next prune.

The audit's step cache keeps the files of a version's folder: :func:`staged` puts
copies of the patches a report refers to in the version's ``fixes/`` while the cache
stores them, and :func:`settle` files the copies a cache restored there back into the
shared folder.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ctxaudit import atomic

#: a version folder's own patch folder: the step cache's staging place
STAGING = "fixes"
#: the digits of the text's sha256 in a patch's name
DIGITS = 12
#: where the processes writing into a report folder claim the patches they write
CLAIMS = ".ctxaudit-claims"


def folder(out_root: Path, target: str) -> Path:
    """The folder of a target's patches, beside its versions' report folders."""
    return out_root / f"{target}-fixes"


def file_name(name: str, text: str) -> str:
    """``<name>-<digest>.patch``: the same text, the same name."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:DIGITS]
    return f"{name}-{digest}.patch"


def write(out_root: Path, target: str, name: str, text: str) -> str:
    """Write a patch of ``target``'s once (it is there already when another version
    wrote the same text); its link, relative to a version's report folder."""
    path = folder(out_root, target) / file_name(name, text)
    _claim(out_root, path)  # before it is there: another audit's prune keeps it
    if not (path.is_file() and path.read_text(encoding="utf-8") == text):
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_text(path, text)
    return f"../{path.parent.name}/{path.name}"


def links(fixes: Iterable[Mapping[str, Any]] | None, fixed: Mapping[str, Any] | None) -> list[str]:
    """The patch links of a report's ``fixes`` (each fix's row) and ``fixed`` (the
    fully fixed tree's combined patch)."""
    found = [str(row["patch"]) for row in fixes or [] if row.get("patch")]
    combined = (fixed or {}).get("combined_patch")
    return found + ([str(combined)] if combined else [])


def _well_formed(report: Mapping[str, Any]) -> bool:
    """Whether the patch links of ``report`` can be read: ``fixes`` a list of objects,
    ``fixed`` an object (either may be missing)."""
    fixes, fixed = report.get("fixes") or [], report.get("fixed") or {}
    return (
        isinstance(fixes, list)
        and all(isinstance(row, dict) for row in fixes)
        and isinstance(fixed, dict)
    )


def _shared(version_dir: Path, link: str) -> Path | None:
    """The file a link names when it leads out of the version's folder (None when the
    patch is the version's own)."""
    path = Path(link)
    if path.is_absolute() or path.parts[:1] != ("..",):
        return None
    return version_dir.parent / Path(*path.parts[1:])


@contextmanager
def staged(report: Any, version_dir: Path) -> Iterator[None]:
    """While it lasts, copies of the shared patches ``report`` (a ``TargetReport``)
    refers to are in the version's ``fixes/``, where the step cache collects a
    version's files."""
    copies: list[Path] = []
    try:
        for link in links(report.fixes, report.fixed):
            shared = _shared(version_dir, link)
            if shared is None or not shared.is_file():
                continue
            copy = version_dir / STAGING / shared.name
            copy.parent.mkdir(parents=True, exist_ok=True)
            copies.append(copy)  # before the copy: a half-made one goes too
            shutil.copyfile(shared, copy)
        yield
    finally:
        for copy in copies:
            with contextlib.suppress(OSError):
                copy.unlink(missing_ok=True)
        _remove_if_empty(version_dir / STAGING)


def settle(report: Any, version_dir: Path) -> None:
    """Move the copies of shared patches a cache restored into the version's
    ``fixes/`` to the shared folder, where the links of ``report`` (a ``TargetReport``)
    lead."""
    for link in links(report.fixes, report.fixed):
        shared = _shared(version_dir, link)
        copy = version_dir / STAGING / Path(link).name
        if shared is None or not copy.is_file():
            continue
        _claim(version_dir.parent, shared)
        shared.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_bytes(shared, copy.read_bytes())
        copy.unlink()
    _remove_if_empty(version_dir / STAGING)


def clear_own(version_dir: Path) -> None:
    """Remove a version's own patches (an earlier run's, in its ``fixes/``)."""
    own = version_dir / STAGING
    if own.is_dir():
        for old in own.glob("*.patch"):
            old.unlink()
        _remove_if_empty(own)


def prune(out_root: Path) -> list[Path]:
    """Remove the shared patches no report under ``out_root`` refers to (each target's
    that has a report there) and no other live process claimed; the files removed. This
    process's claims go with it (its reports are written)."""
    referred: set[Path] = set()
    shared_dirs: set[Path] = set()
    for findings in out_root.glob("*/findings.json"):
        try:
            report = json.loads(findings.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []  # a report that cannot be read may refer to any of them
        if not isinstance(report, dict) or not _well_formed(report):
            return []  # a report of another shape may refer to any of them
        if report.get("target"):
            shared_dirs.add(folder(out_root, str(report["target"])))
        for link in links(report.get("fixes"), report.get("fixed")):
            shared = _shared(findings.parent, link)
            if shared is not None:
                referred.add(shared.resolve())
    listed = {d: sorted(d.glob("*.patch")) for d in sorted(shared_dirs)}
    # read after the listing: a patch listed was claimed before it was written
    claimed = _claimed(out_root)
    removed = []
    for shared_dir, patches in listed.items():
        for patch in patches:
            if patch.resolve() not in referred | claimed:
                patch.unlink(missing_ok=True)
                removed.append(patch)
        _remove_if_empty(shared_dir)
    shutil.rmtree(out_root / CLAIMS / _me(), ignore_errors=True)
    _remove_if_empty(out_root / CLAIMS)
    return removed


def _started(pid: int) -> str:
    """When process ``pid`` started (clock ticks since boot; "" where that is unknown):
    with its pid, what tells it from a later process given the same pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return ""
    fields = stat.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 else ""


def _me() -> str:
    return f"{os.getpid()}-{_started(os.getpid())}"


def _alive(writer: str) -> bool:
    """The process a claims folder is named after (``<pid>-<start>``) is running."""
    pid, _, start = writer.partition("-")
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return not start or _started(int(pid)) in ("", start)


def _claim(out_root: Path, patch: Path) -> None:
    """This process is about to write ``patch`` (a shared patch under ``out_root``)."""
    mine = out_root / CLAIMS / _me() / patch.parent.name
    mine.mkdir(parents=True, exist_ok=True)
    (mine / patch.name).touch()


def _claimed(out_root: Path) -> set[Path]:
    """The shared patches the live processes other than this one claimed; the claims
    of processes that have ended are removed."""
    found: set[Path] = set()
    claims = out_root / CLAIMS
    if not claims.is_dir():
        return found
    for writer in sorted(claims.iterdir()):
        if writer.name == _me():
            continue
        if not _alive(writer.name):
            shutil.rmtree(writer, ignore_errors=True)
            continue
        with contextlib.suppress(OSError):  # it may end and remove them meanwhile
            for claim in writer.glob("*/*.patch"):
                found.add((out_root / claim.parent.name / claim.name).resolve())
    return found


def _remove_if_empty(path: Path) -> None:
    with contextlib.suppress(OSError):  # what cannot be removed is only left empty
        if path.is_dir() and not any(path.iterdir()):
            path.rmdir()
