"""The release-audit matrix as data: every audited target version side by side.

Reads what the audit wrote per target version (``reports/<target>-<version>/``:
``findings.json`` and, when mutation ran, ``mutation.json`` / ``mutation.md``) into
a :class:`Matrix`: the versions in release order, what changed between consecutive
versions of a target, and each known finding across the versions.
"""

from __future__ import annotations

import importlib
import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxaudit import targets
from ctxaudit.audit import PROPERTIES
from ctxaudit.outcomes import COULD_NOT_CHECK as COULD_NOT_CHECK  # re-exported
from ctxaudit.outcomes import FAILS as FAILS
from ctxaudit.outcomes import HOLDS as HOLDS
from ctxaudit.outcomes import NOT_CHECKED as NOT_CHECKED
from ctxaudit.targets.base import release_order

#: verdict -> (symbol, css class); the word itself is always shown too. "could not
#: check" (ctxaudit's own error, a tree it cannot drive) is neither holds nor fails
MARKS = {
    HOLDS: ("✓", "holds"),
    FAILS: ("✗", "fails"),
    COULD_NOT_CHECK: ("?", "cnc"),
    NOT_CHECKED: ("–", "nc"),
}
VERDICTS = frozenset(MARKS)
#: mutation kinds in display order (docs/properties.md, section 4); other names sort after these
KIND_ORDER = ("removed-write", "wrong-comparison", "other")
#: mutation-testing-elements status -> status name used by ``mutation.report.score``.
#: CompileError, RuntimeError and Pending are left out of the score (as in Stryker).
MTE_TO_STATUS = {
    "Killed": "killed",
    "Timeout": "timeout",
    "Survived": "survived",
    "NoCoverage": "no-coverage",
    "Ignored": "equivalent",
}


class MatrixError(ValueError):
    """A report folder that cannot be read (one line, names the file)."""


@dataclass(frozen=True)
class Skipped:
    """A report the matrix left out: it cannot be read or does not hold the expected
    shape (a truncated or foreign file). ``dir`` is its version folder."""

    dir: Path
    file: str
    why: str


@dataclass(frozen=True)
class Unchecked:
    """What ctxaudit could not check on a version (``findings.json`` ``unchecked``)."""

    nodeid: str
    properties: tuple[str, ...]
    why: str


# --------------------------------------------------------------------------- model


@dataclass(frozen=True)
class KnownFinding:
    id: str
    prop: str
    summary: str
    region: str
    repro: str
    registered: bool
    affects: bool
    could_not_check: str = ""  # why its check said neither (then ``affects`` is False)


@dataclass(frozen=True)
class NewFinding:
    properties: tuple[str, ...]
    message: str
    test: str
    reproduction: str


@dataclass(frozen=True)
class FixState:
    """A known finding's fix on one version (``findings.json`` ``fixes``, the fix audit)."""

    id: str
    prop: str
    status: str  # "fix verified", "not needed", "no fix", "does not apply", ...
    detail: str
    patch: str  # relative to the version's folder, "" when none was written


@dataclass(frozen=True)
class FixedTree:
    """The fully fixed tree of one version (``findings.json`` ``fixed``)."""

    applied: tuple[str, ...]
    combined_patch: str  # relative to the version's folder, "" when no fix applied
    failing: tuple[str, ...]  # properties that fail on it
    remaining: int  # failures on it
    ok: bool
    elapsed_s: float
    seeds: tuple[int | None, ...] = ()  # the seeds it ran under (more than one: each)


@dataclass(frozen=True)
class KindScore:
    kind: str
    total: int
    detected: int  # Killed + Timeout
    undetected: int  # Survived + NoCoverage
    equivalent: int  # Ignored: listed in mutation/equivalent.toml, out of the score
    score: float | None  # percent, None when no mutant counts


@dataclass(frozen=True)
class MutationSummary:
    kinds: dict[str, KindScore]  # display order
    overall: KindScore
    gate_passed: bool | None
    gate_failures: int
    json_path: Path
    md_path: Path | None
    #: the same mutants against the target's own tests (mutation.json config.peer)
    peer: dict[str, Any] | None = None
    #: the fixes applied to the mutated tree (``--mutate fixed``); empty: the released one
    fixes: tuple[str, ...] = ()


@dataclass
class VersionReport:
    target: str
    version: str
    dir: Path
    profile: str
    seed: int | None
    elapsed_s: float
    exit_status: int
    ok: bool
    verdicts: dict[str, str]
    known: list[KnownFinding]
    findings: list[NewFinding]
    mutation: MutationSummary | None = None
    #: the fix audit: each known finding's fix, the failures attributed to known
    #: findings (their count), the fully fixed tree; empty/0/None without one
    fixes: list[FixState] = field(default_factory=list)
    attributed: int = 0
    #: the properties those attributed failures break
    attributed_props: tuple[str, ...] = ()
    fixed: FixedTree | None = None
    unchecked: list[Unchecked] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.target} {self.version}"

    @property
    def failing(self) -> list[str]:
        return [p for p, v in self.verdicts.items() if v == FAILS]

    @property
    def cannot_check(self) -> list[str]:
        """The properties ctxaudit could not check on this version."""
        return [p for p, v in self.verdicts.items() if v == COULD_NOT_CHECK]

    @property
    def outcome(self) -> str:
        """fails (the target breaks a property), else could not check (ctxaudit could
        not check something: a property, a known finding's check, the suite), else
        holds; as ``TargetReport.outcome``."""
        if self.failing:
            return FAILS
        if self.unchecked or self.cannot_check or (self.suite_error and not self.ok):
            return COULD_NOT_CHECK
        return HOLDS

    @property
    def affecting(self) -> list[KnownFinding]:
        return [k for k in self.known if k.affects]

    @property
    def suite_error(self) -> bool:
        return self.exit_status not in (0, 1)

    def known_state(self, finding_id: str) -> bool | None:
        """True affects, False checked and does not reproduce, None not checked."""
        for k in self.known:
            if k.id == finding_id:
                return None if k.could_not_check else k.affects
        return None


@dataclass(frozen=True)
class Change:
    """What changed from one version of a target to the next."""

    target: str
    before: str
    after: str
    appeared: list[str]  # known findings that affect ``after`` but not ``before``
    fixed: list[str]  # known findings that affect ``before`` but not ``after``
    verdicts: list[tuple[str, str, str]]  # (property, verdict before, verdict after)
    new_findings: tuple[int, int]
    scores: list[tuple[str, float | None, float | None]]  # per kind, when both ran mutation

    @property
    def empty(self) -> bool:
        return not (
            self.appeared
            or self.fixed
            or self.verdicts
            or self.scores
            or self.new_findings[0] != self.new_findings[1]
        )


@dataclass(frozen=True)
class KnownRow:
    """One known finding across the versions of its target."""

    target: str
    id: str
    prop: str
    summary: str
    states: dict[str, bool | None]  # version -> affects / does not reproduce / not checked
    registered: list[str]

    @property
    def affected(self) -> list[str]:
        return [v for v, s in self.states.items() if s]

    def runs(self) -> list[tuple[str, str, str | None]]:
        """Contiguous runs of affected versions on one line of the target's history:
        (first, last, the next version on that line when it does not reproduce, else
        None)."""
        out: list[tuple[str, str, str | None]] = []
        versions = list(self.states)
        line = {v: history(self.target, v)[0] for v in versions}
        i = 0
        while i < len(versions):
            if not self.states[versions[i]]:
                i += 1
                continue
            j = i
            while (
                j + 1 < len(versions)
                and self.states[versions[j + 1]]
                and line[versions[j + 1]] == line[versions[i]]
            ):
                j += 1
            nxt = versions[j + 1] if j + 1 < len(versions) else None
            on_line = nxt is not None and line[nxt] == line[versions[i]]
            fixed = nxt if on_line and nxt is not None and self.states[nxt] is False else None
            out.append((versions[i], versions[j], fixed))
            i = j + 1
        return out


@dataclass
class Matrix:
    versions: list[VersionReport]
    changes: list[Change] = field(default_factory=list)
    known: list[KnownRow] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)  # reports left out, and why

    @property
    def targets(self) -> list[str]:
        return list(dict.fromkeys(v.target for v in self.versions))

    def of(self, target: str) -> list[VersionReport]:
        return [v for v in self.versions if v.target == target]

    def properties(self, target: str) -> list[str]:
        """The target's properties in the audit's order, then any others a report names."""
        names = list(PROPERTIES.get(target, {}))
        for v in self.of(target):
            names += [p for p in v.verdicts if p not in names]
        return names


# --------------------------------------------------------------------------- reading


def history(target: str, version: str) -> tuple[str, tuple[Any, ...]]:
    """A version's line and its order on it, as its target says
    (``Target.history``); one line in release order for a target the registry does
    not know."""
    if target in targets.names():
        return targets.get(target).history(version)
    return "", release_order(version)


def version_key(target: str, version: str) -> tuple[Any, ...]:
    """Sort key: the registered targets in registration order, then targets the registry
    does not know (by name); within a target its history: line by line (in release
    order, ``main`` last), each in its own order."""
    order = targets.names()
    rank = order.index(target) if target in order else len(order)
    line, on_line = history(target, version)
    return (rank, target, line == "main", release_order(line) if line else (), on_line)


def _sort_key(v: VersionReport) -> tuple[Any, ...]:
    return version_key(v.target, v.version)


def _s(d: dict[str, Any], key: str, default: str = "") -> str:
    value = d.get(key, default)
    return default if value is None else str(value)


def _shape(data: dict[str, Any], file: Path) -> None:
    """The parts of findings.json the matrix reads, checked for their type."""
    for key in ("verdicts", "fixed"):
        if data.get(key) is not None and not isinstance(data[key], dict):
            raise MatrixError(f"{file}: {key} is not an object")
    for key in ("known", "findings", "fixes", "attributed", "unchecked"):
        if data.get(key) is not None and not isinstance(data[key], list):
            raise MatrixError(f"{file}: {key} is not a list")
    bad = sorted({str(v) for v in (data.get("verdicts") or {}).values()} - VERDICTS)
    if bad:
        raise MatrixError(f"{file}: unknown verdict {bad[0]!r}")


def load_version(path: Path, mutation: bool = True) -> VersionReport:
    """One target version from its folder (or its ``findings.json``), with its
    ``mutation.json`` when there is one and ``mutation``. MatrixError (one line, names
    the file) when it cannot be read or does not hold the expected shape."""
    file = path if path.is_file() else path / "findings.json"
    try:
        data = json.loads(file.read_text())
    except (OSError, ValueError) as exc:
        raise MatrixError(f"{file}: cannot read findings.json ({exc})") from None
    if not isinstance(data, dict) or "target" not in data or "version" not in data:
        raise MatrixError(f"{file}: not an audit findings.json (no target/version)")
    _shape(data, file)
    try:
        report = _version(data, file)
    except (TypeError, ValueError, AttributeError, KeyError) as exc:
        raise MatrixError(
            f"{file}: does not hold the expected shape ({type(exc).__name__}: {exc})"
        ) from None
    if mutation and mutation_report(file.parent).exists():
        report.mutation = _mutation(mutation_report(file.parent))
    return report


def mutation_report(folder: Path) -> Path:
    """The version's mutation report the matrix shows: the fully fixed tree's
    (``fixed-tree/``, where the known findings hide no mutant) when there is one, else
    the one beside its findings."""
    fixed = folder / "fixed-tree" / "mutation.json"
    return fixed if fixed.exists() else folder / "mutation.json"


def _mutation(path: Path) -> MutationSummary:
    try:
        return load_mutation(path)
    except (TypeError, ValueError, AttributeError, KeyError) as exc:
        if isinstance(exc, MatrixError):
            raise
        raise MatrixError(
            f"{path}: does not hold the expected shape ({type(exc).__name__}: {exc})"
        ) from None


def _version(data: dict[str, Any], file: Path) -> VersionReport:
    """One version's ``findings.json`` as a :class:`VersionReport`, section by section."""
    verdicts = {str(k): str(v) for k, v in (data.get("verdicts") or {}).items()}
    unchecked = _unchecked(data)
    exit_status = int(data.get("exit_status", 0))
    ok = data.get("ok")
    if not isinstance(ok, bool):
        ok = (
            exit_status == 0
            and not unchecked
            and all(v in (HOLDS, NOT_CHECKED) for v in verdicts.values())
        )
    seed = data.get("seed")
    report = VersionReport(
        target=str(data["target"]),
        version=str(data["version"]),
        dir=file.parent,
        profile=_s(data, "profile"),
        seed=seed if isinstance(seed, int) else None,
        elapsed_s=float(data.get("elapsed_s") or 0.0),
        exit_status=exit_status,
        ok=ok,
        verdicts=verdicts,
        known=_known(data),
        findings=_new_findings(data),
        unchecked=unchecked,
    )
    report.fixes = _fixes(data)
    attributed = [a for a in data.get("attributed") or [] if isinstance(a, dict)]
    report.attributed = len(data.get("attributed") or [])
    report.attributed_props = tuple(
        dict.fromkeys(str(p) for a in attributed for p in a.get("properties") or [])
    )
    report.fixed = _fixed_tree(data)
    return report


def _entries(data: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """The section ``key``'s entries that are objects (anything else is left out)."""
    return [e for e in data.get(key) or [] if isinstance(e, dict)]


def _known(data: dict[str, Any]) -> list[KnownFinding]:
    return [
        KnownFinding(
            id=_s(k, "id"),
            prop=_s(k, "property"),
            summary=_s(k, "summary"),
            region=_s(k, "region"),
            repro=_s(k, "repro"),
            registered=bool(k.get("registered")),
            affects=bool(k.get("affects")) and not k.get("could_not_check"),
            could_not_check=_s(k, "could_not_check"),
        )
        for k in _entries(data, "known")
    ]


def _new_findings(data: dict[str, Any]) -> list[NewFinding]:
    return [
        NewFinding(
            properties=tuple(str(p) for p in f.get("properties") or []),
            message=_s(f, "message"),
            test=_s(f, "test"),
            reproduction=_s(f, "reproduction"),
        )
        for f in _entries(data, "findings")
    ]


def _unchecked(data: dict[str, Any]) -> list[Unchecked]:
    return [
        Unchecked(
            nodeid=_s(u, "nodeid"),
            properties=tuple(str(p) for p in u.get("properties") or []),
            why=_s(u, "why"),
        )
        for u in _entries(data, "unchecked")
    ]


def _fixes(data: dict[str, Any]) -> list[FixState]:
    return [
        FixState(
            id=_s(x, "id"),
            prop=_s(x, "property"),
            status=_s(x, "status"),
            detail=_s(x, "detail"),
            patch=_s(x, "patch"),
        )
        for x in _entries(data, "fixes")
    ]


def _fixed_tree(data: dict[str, Any]) -> FixedTree | None:
    """The fix audit's fully fixed tree (None when it did not run)."""
    fixed = data.get("fixed")
    if not isinstance(fixed, dict) or not fixed:
        return None
    verdicts_fixed = fixed.get("verdicts") or {}
    return FixedTree(
        applied=tuple(str(a) for a in fixed.get("applied") or []),
        combined_patch=_s(fixed, "combined_patch"),
        failing=tuple(str(p) for p, v in verdicts_fixed.items() if v == FAILS),
        remaining=len(fixed.get("findings") or []),
        ok=bool(fixed.get("ok")),
        elapsed_s=float(fixed.get("elapsed_s") or 0.0),
        seeds=tuple(fixed.get("seeds") or ()),
    )


def _score(counts: Counter[str]) -> float | None:
    """``mutation.report.score``: detected / (all - equivalent), in percent.

    Imported when first needed: ``mutation`` pulls in libcst and mutmut (about
    2 s), which a matrix without mutation reports does not need."""
    report = importlib.import_module("mutation.report")
    fn: Callable[[Counter[str]], float | None] = report.score
    return fn(counts)


def kind_of(mutator_name: str) -> str:
    """``mutation/report.py`` writes ``mutatorName`` as ``<kind>:<operator>``."""
    return mutator_name.split(":", 1)[0] if ":" in mutator_name else "other"


def _kind_score(kind: str, statuses: Counter[str]) -> KindScore:
    counts: Counter[str] = Counter()
    for status, n in statuses.items():
        counts[MTE_TO_STATUS.get(status, status.lower())] += n
    return KindScore(
        kind=kind,
        total=sum(statuses.values()),
        detected=counts["killed"] + counts["timeout"],
        undetected=counts["survived"] + counts["no-coverage"],
        equivalent=counts["equivalent"],
        score=_score(counts),
    )


def scores(mte: dict[str, Any]) -> tuple[dict[str, KindScore], KindScore]:
    """Mutation score per kind and overall from a mutation-testing-elements report."""
    per_kind: dict[str, Counter[str]] = {}
    for f in (mte.get("files") or {}).values():
        for m in f.get("mutants") or []:
            kind = kind_of(str(m.get("mutatorName", "")))
            per_kind.setdefault(kind, Counter())[str(m.get("status", ""))] += 1
    order = [k for k in KIND_ORDER if k in per_kind] + sorted(set(per_kind) - set(KIND_ORDER))
    kinds = {k: _kind_score(k, per_kind[k]) for k in order}
    overall = _kind_score("all", sum(per_kind.values(), Counter()))
    return kinds, overall


def load_mutation(path: Path) -> MutationSummary:
    try:
        mte = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise MatrixError(f"{path}: cannot read mutation.json ({exc})") from None
    if not isinstance(mte, dict) or not isinstance(mte.get("files"), dict):
        raise MatrixError(f"{path}: not a mutation-testing-elements report (no files)")
    kinds, overall = scores(mte)
    gate = (mte.get("config") or {}).get("gate") or {}
    passed = gate.get("passed")
    md = path.with_name("mutation.md")
    return MutationSummary(
        kinds=kinds,
        overall=overall,
        gate_passed=passed if isinstance(passed, bool) else None,
        gate_failures=len(gate.get("failures") or []),
        json_path=path,
        md_path=md if md.exists() else None,
        peer=(mte.get("config") or {}).get("peer") or None,
        fixes=tuple((mte.get("config") or {}).get("fixes") or ()),
    )


# --------------------------------------------------------------------------- building


def diff(a: VersionReport, b: VersionReport) -> Change:
    """What changed from ``a`` to ``b`` (same target). Known findings are compared
    only where both versions checked them."""
    both = [
        k.id for k in b.known if a.known_state(k.id) is not None and b.known_state(k.id) is not None
    ]
    appeared = [i for i in both if b.known_state(i) and not a.known_state(i)]
    fixed = [i for i in both if a.known_state(i) and not b.known_state(i)]
    props = list(dict.fromkeys([*a.verdicts, *b.verdicts]))
    verdicts = [
        (p, a.verdicts.get(p, NOT_CHECKED), b.verdicts.get(p, NOT_CHECKED))
        for p in props
        if a.verdicts.get(p, NOT_CHECKED) != b.verdicts.get(p, NOT_CHECKED)
    ]
    sc: list[tuple[str, float | None, float | None]] = []
    if a.mutation and b.mutation:  # a version without a mutation run is no change
        ka, kb = a.mutation.kinds, b.mutation.kinds
        for kind in dict.fromkeys([*ka, *kb]):
            sa = ka[kind].score if kind in ka else None
            sb = kb[kind].score if kind in kb else None
            if sa != sb:
                sc.append((kind, sa, sb))
    return Change(
        target=b.target,
        before=a.version,
        after=b.version,
        appeared=appeared,
        fixed=fixed,
        verdicts=verdicts,
        new_findings=(len(a.findings), len(b.findings)),
        scores=sc,
    )


def _known_rows(versions: list[VersionReport]) -> list[KnownRow]:
    rows: dict[tuple[str, str], KnownRow] = {}
    for v in versions:
        for k in v.known:
            key = (v.target, k.id)
            if key not in rows:
                rows[key] = KnownRow(
                    v.target,
                    k.id,
                    k.prop,
                    k.summary,
                    {w.version: w.known_state(k.id) for w in versions if w.target == v.target},
                    [],
                )
            if k.registered:
                rows[key].registered.append(v.version)
    return list(rows.values())


def build(report_dirs: Sequence[Path]) -> Matrix:
    """The matrix of the given report folders (or their ``findings.json`` files). A
    folder whose findings.json cannot be read or does not hold the expected shape is
    left out, and so is a mutation.json like that (the version stays, without its
    mutation score): each is listed in ``Matrix.skipped``, never a reason to fail."""
    loaded: list[VersionReport] = []
    skipped: list[Skipped] = []
    for d in report_dirs:
        path = Path(d)
        folder = path.parent if path.is_file() else path
        try:
            v = load_version(path, mutation=False)
        except MatrixError as exc:
            skipped.append(Skipped(folder, "findings.json", str(exc)))
            continue
        mutation = mutation_report(v.dir)
        if mutation.exists():
            try:
                v.mutation = _mutation(mutation)
            except MatrixError as exc:
                skipped.append(Skipped(folder, "mutation.json", str(exc)))
        loaded.append(v)
    versions = sorted(loaded, key=_sort_key)
    m = Matrix(versions, skipped=skipped)
    for target in m.targets:
        vs = m.of(target)
        m.changes += [
            diff(a, b)
            for a, b in zip(vs, vs[1:], strict=False)
            if history(target, a.version)[0] == history(target, b.version)[0]
        ]
    m.known = _known_rows(versions)
    return m
