"""The release-audit matrix as data: every audited target version side by side.

Reads what the audit wrote per target version (``reports/<target>-<version>/``:
``findings.json`` and, when mutation ran, ``mutation.json`` / ``mutation.md``) into
a :class:`Matrix`: the versions in release order, what changed between consecutive
versions of a target, and each known finding across the versions. The types are
:mod:`ctxaudit.matrix.data`'s (named here too, as the matrix's readers import them).
"""

from __future__ import annotations

import importlib
import json
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ctxaudit.matrix.data import (
    KIND_ORDER,
    MARKS,
    MTE_TO_STATUS,
    VERDICTS,
    Change,
    FixedTree,
    FixState,
    KindScore,
    KnownFinding,
    KnownRow,
    Matrix,
    MatrixError,
    MutationSummary,
    NewFinding,
    Skipped,
    Unchecked,
    VersionReport,
    history,
    version_key,
)
from ctxaudit.outcomes import COULD_NOT_CHECK as COULD_NOT_CHECK  # re-exported
from ctxaudit.outcomes import FAILS as FAILS
from ctxaudit.outcomes import HOLDS as HOLDS
from ctxaudit.outcomes import NOT_CHECKED as NOT_CHECKED

__all__ = [
    "COULD_NOT_CHECK",
    "FAILS",
    "HOLDS",
    "KIND_ORDER",
    "MARKS",
    "MTE_TO_STATUS",
    "NOT_CHECKED",
    "VERDICTS",
    "Change",
    "FixState",
    "FixedTree",
    "KindScore",
    "KnownFinding",
    "KnownRow",
    "Matrix",
    "MatrixError",
    "MutationSummary",
    "NewFinding",
    "Skipped",
    "Unchecked",
    "VersionReport",
    "build",
    "diff",
    "history",
    "kind_of",
    "load_mutation",
    "load_version",
    "mutation_report",
    "scores",
    "version_key",
]


# --------------------------------------------------------------------------- reading


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
        data = json.loads(file.read_text(encoding="utf-8"))
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
            reproduce=_s(k, "reproduce"),
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
        mte = json.loads(path.read_text(encoding="utf-8"))
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
