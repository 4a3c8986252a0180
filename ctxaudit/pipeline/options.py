"""``ctxaudit audit``'s options, checked before anything runs.

The command line hands over what it parsed (:class:`AuditRequest`); :func:`prepare`
reads the baseline, fills the defaults that depend on other options, checks ``--out``
and the report files, resolves every target and finds ``--since``'s changes, in that
order, and gives the run its :class:`AuditOptions`. What stops it is a line: a bad
combination of options (:class:`BadUsage`, said as the parser says its errors) or
anything else that keeps the audit from starting (:class:`CannotStart`); both exit 2.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxaudit import targets
from ctxaudit.targets import TargetError
from ctxaudit.targets.base import Described

if TYPE_CHECKING:
    from ctxaudit.baseline import Baseline
    from ctxaudit.pipeline.shards import Shard


class CannotStart(Exception):
    """Why the audit cannot start (a line; exit 2)."""


class BadUsage(Exception):
    """Options that do not go together (a line the parser says as its own; exit 2)."""


@dataclasses.dataclass(frozen=True)
class AuditRequest:
    """What the command line gave ``audit``, unchecked: the options of the same names
    (``profile``, ``mutation`` and ``fixes`` None where not given: their defaults
    depend on the others)."""

    specs: list[str]  # --target, in the order given (empty: the default targets)
    repos: dict[str, Path | None]  # target name -> the repository its specs resolve in
    out: Path
    release: bool = False
    profile: str | None = None
    seeds: list[int] = dataclasses.field(default_factory=list)
    jobs: int = dataclasses.field(default_factory=lambda: default_jobs())
    mutation: bool | None = None
    other_sample: float = 0.25
    peer: bool = True
    mutate: str = "released"
    fixes: bool | None = None
    cache: bool = True
    own_tests: bool | None = None  # None: on with --release
    since: str | None = None
    baseline: Path | None = None
    junit_xml: Path | None = None
    sarif: Path | None = None
    command: str = "ctxaudit audit"  # the command line, for the time table
    #: the reports stay in ``out`` (False: a temporary folder, ``ctxaudit baseline``'s,
    #: gone when the command ends: its lines name no file there)
    kept: bool = True
    shard: Shard | None = None  # --shard i/N: only this part of the versions


@dataclasses.dataclass(frozen=True)
class AuditOptions:
    """``ctxaudit audit``'s options, checked before anything runs: the target versions
    (each once, in the order first given), where the reports go, and how each phase
    runs (the command line's options of the same names)."""

    targets: list[Described]
    out: Path
    profile: str
    seeds: list[int]  # --seed: the first for everything, the others for the fixed trees
    jobs: int
    mutation: bool
    other_sample: float
    peer: bool
    mutate: str
    fixes: bool
    cache: bool
    own_tests: bool  # the fix audit runs the target's own tests on the fixed trees
    since: str | None
    changed: dict[str, Any]  # --since: target label -> what changed (ctxaudit.since)
    baseline: Baseline | None
    junit_xml: Path | None
    sarif: Path | None
    command: str  # the command line, for the time table
    kept: bool = True  # the reports stay in ``out`` (AuditRequest.kept)
    shard: Shard | None = None  # --shard: ``targets`` is this part of ``plan``
    #: every version the specs name, each once, in the order given (``targets``, unless
    #: this is one shard of it)
    plan: list[Described] = dataclasses.field(default_factory=list)


def prepare(request: AuditRequest) -> AuditOptions:
    """The audit's options from its request: the baseline read, every target resolved,
    ``--out`` and the report files checked, ``--since``'s changes found. Raises
    :class:`BadUsage` or :class:`CannotStart` when it cannot start."""
    baseline = load_baseline(request.baseline)
    # a first run sees its answer in a minute; --release is thorough
    profile = request.profile or ("thorough" if request.release else "ci")
    mutation = request.mutation
    if mutation is None:  # a pull-request gate (--since) is a mutation run
        mutation = bool(request.release or request.since)
    fixes = not request.since if request.fixes is None else request.fixes
    if request.shard is not None and request.baseline is not None:
        raise BadUsage("--shard with --baseline: a baseline is judged over every version; "
                       "give it to `ctxaudit merge` (not yet) or audit unsharded")  # fmt: skip
    if request.shard is not None and mutation and request.mutate == "fixed":
        raise BadUsage("--shard with --mutate fixed: each part mutates a share of every "
                       "version, and only one part runs a version's fix audit")  # fmt: skip
    if not fixes and request.mutate == "fixed":
        raise BadUsage("--mutate fixed mutates the fix audit's fully fixed tree: not with "
                       "--no-fixes (or --since without --fixes)")  # fmt: skip
    why = (  # before any target is resolved (a download, an environment built)
        empty_spec(request.specs)
        or check_out(request.out)
        or check_file("--junit-xml", request.junit_xml)
        or check_file("--sarif", request.sarif)
        or check_collisions(request)
    )
    if why is not None:
        raise CannotStart(why)
    found = resolve_targets(request.specs, request.repos)
    chosen = unique(found)
    changed = changed_since(chosen, request.since) if request.since else {}
    if len(chosen) < len(found):
        print(f"ctxaudit: {len(found) - len(chosen)} target(s) given twice: each version "
              "runs once", flush=True)  # fmt: skip
    plan = chosen
    if request.shard is not None:
        chosen = take_shard(plan, request.shard)
    return AuditOptions(
        targets=chosen, out=request.out, profile=profile, seeds=list(request.seeds),
        jobs=request.jobs, mutation=mutation, other_sample=request.other_sample,
        peer=request.peer, mutate=request.mutate, fixes=fixes, cache=request.cache,
        own_tests=request.release if request.own_tests is None else request.own_tests,
        since=request.since, changed=changed, baseline=baseline,
        junit_xml=request.junit_xml, sarif=request.sarif, command=request.command,
        kept=request.kept, shard=request.shard, plan=plan,
    )  # fmt: skip


def take_shard(plan: list[Described], shard: Shard) -> list[Described]:
    """The versions of ``plan`` that part ``shard`` runs, said in one line."""
    from ctxaudit.pipeline.shards import recorded_seconds, split

    # the versions' property phases: every part runs a share of every version's mutants
    seconds = recorded_seconds(False)
    labels = [t.label for t in plan]
    took = split(labels, shard.count, seconds)[shard.index - 1]
    timed = [label for label in took if label in seconds]
    how = (
        f"recorded {sum(seconds[label] for label in timed):.0f} s of "
        f"{sum(seconds.get(label, 0.0) for label in labels):.0f} s"
        if timed
        else "more shards than versions: it writes its manifest only"
        if not took
        else "no recorded time: split by the plan's order"
    )
    print(f"ctxaudit: shard {shard} takes {len(took)} of {len(plan)} target version(s)"
          + (f": {', '.join(took)}" if took else "") + f" ({how})", flush=True)  # fmt: skip
    return [t for t in plan if t.label in took]


def default_jobs() -> int:
    """``--jobs`` when not given: the number of cores."""
    return os.cpu_count() or 1


def default_targets() -> list[str]:
    """What the audit checks when no ``--target`` is given: each registered target's
    default spec (gitreins' pinned release and the ledger)."""
    return [t.default_spec for t in targets.all_targets() if t.default_spec]


def one_line(exc: BaseException) -> str:
    """An error as one line (a parser's message can carry a caret diagram below it)."""
    lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()]
    return lines[0] if lines else type(exc).__name__


def empty_spec(specs: list[str]) -> str | None:
    """Why a ``--target`` given empty is refused (None when none is): a target's
    resolver reads an empty spec as its pinned release, so it would audit a target
    nobody named."""
    for spec in specs:
        if not spec.strip():
            return f"--target {spec!r}: an empty spec names no target"
    return None


def check_out(out: Path) -> str | None:
    """Why ``--out`` cannot take the reports (None when it can): it must be a folder, or
    one that can be made, and writable. Makes the folder."""
    try:
        if out.exists() and not out.is_dir():
            return f"--out {out}: not a folder"
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a name too long, a parent that is a file, /proc
        return f"--out {out}: cannot make the folder ({exc.strerror or exc})"
    try:
        fd, probe = tempfile.mkstemp(prefix=".ctxaudit-probe-", dir=out)
    except OSError as exc:
        return f"--out {out}: not writable ({exc.strerror or exc})"
    os.close(fd)
    os.unlink(probe)
    return None


def check_file(option: str, path: Path | None) -> str | None:
    """Why a report file cannot be written at ``path`` (None when it can, or is not asked
    for): not a folder, and in a folder that is there or can be made."""
    if path is None:
        return None
    try:
        if path.is_dir():
            return f"{option} {path}: a folder, not a file"
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"{option} {path}: cannot make its folder ({exc.strerror or exc})"
    # the file is written whole at the end (beside it, then renamed): its folder must
    # take a new file, which only trying tells (/proc, a read-only mount, a full disk)
    try:
        fd, probe = tempfile.mkstemp(prefix=".ctxaudit-probe-", dir=path.parent)
    except OSError as exc:
        return f"{option} {path}: its folder is not writable ({exc.strerror or exc})"
    os.close(fd)
    os.unlink(probe)
    return None


#: the files the audit writes at the top of ``--out`` (each version's go in a folder of
#: its own, and the matrix's timing table in ``timing/``)
OUT_FILES = ("matrix.md", "matrix.html")


def check_collisions(request: AuditRequest) -> str | None:
    """Why two of the files a run reads or writes are one (None when none are): the
    baseline, the JUnit XML, the SARIF, and what the audit writes in ``--out``. Written
    over, the user's baseline (or another report) would be lost."""
    named = [
        (option, path.resolve())
        for option, path in (("--baseline", request.baseline), ("--junit-xml", request.junit_xml),
                             ("--sarif", request.sarif))
        if path is not None
    ]  # fmt: skip
    for i, (option, path) in enumerate(named):
        for other, other_path in named[:i]:
            if path == other_path:
                return f"{option} {path}: the same file as {other}; give each its own"
    out = request.out.resolve()
    for option, path in named:
        owned = path.parent == out and path.name in OUT_FILES
        # timing/, or a version's folder (one that holds a report)
        inside = path.is_relative_to(out / "timing") or (
            path.is_relative_to(out) and (path.parent / "findings.json").exists()
        )
        if owned or inside:
            return (f"{option} {path}: a file the audit writes in --out {out} (its "
                    f"reports' folders and {', '.join(OUT_FILES)}); give another")  # fmt: skip
    return None


def unique(found: list[Described]) -> list[Described]:
    """One entry per distinct target version (its label), in the order first given."""
    seen: dict[str, Described] = {}
    for t in found:
        seen.setdefault(t.label, t)
    return list(seen.values())


def load_baseline(path: Path | None) -> Baseline | None:
    """``--baseline``, read (None when not given)."""
    if path is None:
        return None
    from ctxaudit.baseline import BaselineError, load

    try:
        baseline = load(path)
    except BaselineError as exc:
        raise CannotStart(str(exc)) from None
    for n, entry in enumerate(baseline.entries, 1):
        why = _entry_problem(entry)
        if why:
            raise CannotStart(f"--baseline {path}: entry {n} ({entry.id}): {why}")
    return baseline


def _entry_problem(entry: Any) -> str:
    """Why a baseline entry names nothing the registry knows ("" when it does): an
    unknown target, a finding that target does not register, a property other than
    the finding's. An entry that matches nothing would pass silently, then read "no
    longer reproduces"."""
    from ctxaudit import targets

    names = sorted(t.name for t in targets.all_targets())
    if entry.target not in names:
        return f"unknown target {entry.target!r} (targets: {', '.join(names)})"
    known = {f.id: f for f in targets.get(entry.target).findings()}
    if entry.id not in known:
        return f"{entry.target} registers no finding {entry.id!r}"
    props = str(known[entry.id].property).split("/")
    if entry.property and entry.property not in props:
        return f"its property is {'/'.join(props)}, not {entry.property!r}"
    return ""


def resolve_targets(specs: list[str], repos: dict[str, Path | None]) -> list[Described]:
    """The target versions every ``--target`` names (default: the registered targets'
    default specs), in the order given, resolved in their repositories."""
    from ctxaudit import audit

    found: list[Described] = []
    for spec in specs or default_targets():
        try:
            found += audit.parse_target(spec, repos)
        except TargetError as exc:
            raise CannotStart(one_line(exc)) from None
    return found


def changed_since(chosen: list[Described], since: str) -> dict[str, Any]:
    """``--since``: what changed in each version's history since ``since`` (a line each
    naming the functions in scope that changed)."""
    from ctxaudit.since import SinceError, selection

    try:
        changed = selection(chosen, since)
    except SinceError as exc:
        raise CannotStart(one_line(exc)) from None
    for label, ch in changed.items():
        print(
            f"ctxaudit: {label}: {len(ch.functions)} function(s) in scope changed since "
            f"{since}: " + (", ".join(f"{p}:{q}" for p, q in ch.functions) or "none"),
            flush=True,
        )
    return dict(changed)
