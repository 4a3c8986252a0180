"""The release-audit matrix: every audited target version side by side.

Reads what the audit wrote per target version (``reports/<target>-<version>/``:
``findings.json`` and, when mutation ran, ``mutation.json`` / ``mutation.md``)
and writes two views of the same :class:`Matrix`:

- ``matrix.md``: the verdict grid per target (rows = properties, columns =
  versions), known findings x versions, what changed between consecutive
  versions, and per version its findings with their minimal reproductions and
  its mutation score per kind;
- ``matrix.html``: one static page (inline CSS and SVG, no script, no external
  resource) with the same content, a summary line for a release manager and a
  chart of failing properties, known findings and mutation score per version.

Python API (what ``ctxaudit audit`` calls)::

    from ctxaudit import matrix
    m = matrix.build(sorted(Path("reports").glob("*/findings.json")))  # dirs or files
    md, html = matrix.write(m, Path("reports"))

Command line: ``python -m ctxaudit.matrix REPORTS_DIR [--out DIR]``.
"""

from __future__ import annotations

import argparse
import html
import importlib
import json
import os
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from packaging.version import InvalidVersion, Version

from ctxaudit.audit import PROPERTIES

HOLDS, FAILS, NOT_CHECKED = "holds", "fails", "not checked"
#: verdict -> (symbol, css class); the word itself is always shown too
MARKS = {HOLDS: ("✓", "holds"), FAILS: ("✗", "fails"), NOT_CHECKED: ("–", "nc")}
#: mutation kinds in display order (SPEC section 4); other names sort after these
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
TARGET_ORDER = ("gitreins",)  # then any other target alphabetically, ledger last


class MatrixError(ValueError):
    """A report folder that cannot be read (one line, names the file)."""


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


@dataclass(frozen=True)
class NewFinding:
    properties: tuple[str, ...]
    message: str
    test: str
    reproduction: str


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

    @property
    def label(self) -> str:
        return f"{self.target} {self.version}"

    @property
    def failing(self) -> list[str]:
        return [p for p, v in self.verdicts.items() if v == FAILS]

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
                return k.affects
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
        """Contiguous runs of affected versions: (first, last, fixed in or None)."""
        out: list[tuple[str, str, str | None]] = []
        versions = list(self.states)
        i = 0
        while i < len(versions):
            if not self.states[versions[i]]:
                i += 1
                continue
            j = i
            while j + 1 < len(versions) and self.states[versions[j + 1]]:
                j += 1
            nxt = versions[j + 1] if j + 1 < len(versions) else None
            fixed = nxt if nxt is not None and self.states[nxt] is False else None
            out.append((versions[i], versions[j], fixed))
            i = j + 1
        return out


@dataclass
class Matrix:
    versions: list[VersionReport]
    changes: list[Change] = field(default_factory=list)
    known: list[KnownRow] = field(default_factory=list)

    @property
    def targets(self) -> list[str]:
        return list(dict.fromkeys(v.target for v in self.versions))

    def of(self, target: str) -> list[VersionReport]:
        return [v for v in self.versions if v.target == target]

    def properties(self, target: str) -> list[str]:
        """The target's properties in SPEC order, then any others a report names."""
        names = list(PROPERTIES.get(target, {}))
        for v in self.of(target):
            names += [p for p in v.verdicts if p not in names]
        return names


# --------------------------------------------------------------------------- reading


def version_key(target: str, version: str) -> tuple[int, str, int, Version, str]:
    """Sort key: gitreins first, ledger last, other targets between (by name); within
    a target PEP 440 order, then versions that are not PEP 440 (``git-<sha>``) by text."""
    if target in TARGET_ORDER:
        rank = TARGET_ORDER.index(target)
    else:
        rank = len(TARGET_ORDER) + (1 if target == "ledger" else 0)
    try:
        return (rank, target, 0, Version(version), "")
    except InvalidVersion:
        return (rank, target, 1, Version("0"), version)


def _sort_key(v: VersionReport) -> tuple[int, str, int, Version, str]:
    return version_key(v.target, v.version)


def _s(d: dict[str, Any], key: str, default: str = "") -> str:
    value = d.get(key, default)
    return default if value is None else str(value)


def load_version(path: Path) -> VersionReport:
    """One target version from its folder (or its ``findings.json``)."""
    file = path if path.is_file() else path / "findings.json"
    try:
        data = json.loads(file.read_text())
    except (OSError, ValueError) as exc:
        raise MatrixError(f"{file}: cannot read findings.json ({exc})") from None
    if not isinstance(data, dict) or "target" not in data or "version" not in data:
        raise MatrixError(f"{file}: not an audit findings.json (no target/version)")
    verdicts = {str(k): str(v) for k, v in (data.get("verdicts") or {}).items()}
    known = [
        KnownFinding(
            id=_s(k, "id"),
            prop=_s(k, "property"),
            summary=_s(k, "summary"),
            region=_s(k, "region"),
            repro=_s(k, "repro"),
            registered=bool(k.get("registered")),
            affects=bool(k.get("affects")),
        )
        for k in data.get("known") or []
        if isinstance(k, dict)
    ]
    findings = [
        NewFinding(
            properties=tuple(str(p) for p in f.get("properties") or []),
            message=_s(f, "message"),
            test=_s(f, "test"),
            reproduction=_s(f, "reproduction"),
        )
        for f in data.get("findings") or []
        if isinstance(f, dict)
    ]
    exit_status = int(data.get("exit_status", 0))
    ok = data.get("ok")
    if not isinstance(ok, bool):
        ok = exit_status == 0 and FAILS not in verdicts.values()
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
        known=known,
        findings=findings,
    )
    mutation = file.parent / "mutation.json"
    if mutation.exists():
        report.mutation = load_mutation(mutation)
    return report


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
    )


# --------------------------------------------------------------------------- building


def diff(a: VersionReport, b: VersionReport) -> Change:
    """What changed from ``a`` to ``b`` (same target). Known findings are compared
    only where both versions checked them."""
    both = [k.id for k in b.known if a.known_state(k.id) is not None]
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
    """The matrix of the given report folders (or their ``findings.json`` files)."""
    versions = sorted((load_version(Path(d)) for d in report_dirs), key=_sort_key)
    m = Matrix(versions)
    for target in m.targets:
        vs = m.of(target)
        m.changes += [diff(a, b) for a, b in zip(vs, vs[1:], strict=False)]
    m.known = _known_rows(versions)
    return m


# --------------------------------------------------------------------------- summary


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1f}%"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _version_span(vs: list[VersionReport]) -> str:
    if len(vs) == 1:
        return vs[0].version
    return f"{vs[0].version} … {vs[-1].version}"


def summary_lines(m: Matrix) -> list[str]:
    """Plain-text sentences for the top of both reports."""
    if not m.versions:
        return ["No reports found."]
    per = ", ".join(f"{len(m.of(t))} {t} ({_version_span(m.of(t))})" for t in m.targets)
    failing = [v for v in m.versions if not v.ok]
    out = [f"{_plural(len(m.versions), 'target version')} audited: {per}."]
    if failing:
        names = ", ".join(
            v.label + (" (suite error)" if v.suite_error else f" ({len(v.failing)} failing)")
            for v in failing
        )
        out.append(f"{len(failing)} of {len(m.versions)} fail: {names}.")
    else:
        out.append("Every property holds on every version.")
    if failing:
        worst = max(failing, key=lambda v: (len(v.failing), len(v.findings), v.label))
        props = Counter(p for v in m.versions for p in v.failing)
        top = ", ".join(
            f"{p} (fails on {n} of {len(m.of(_target_of(m, p)))})"
            for p, n in sorted(props.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        )
        found = sorted(m.known, key=lambda r: (-len(r.affected), r.id))
        known = ", ".join(
            f"{r.id} ({len(r.affected)} version{'' if len(r.affected) == 1 else 's'})"
            for r in found[:3]
            if r.affected
        )
        worst_text = (
            f"Worst offenders: {worst.label} ({len(worst.failing)} failing properties, "
            f"{len(worst.affecting)} known findings, {len(worst.findings)} new findings)"
        )
        if top:
            worst_text += f"; most failing properties: {top}"
        if known:
            worst_text += f"; most widespread known findings: {known}"
        out.append(worst_text + ".")
    gates = [v for v in m.versions if v.mutation and v.mutation.gate_passed is not None]
    if gates:
        failed = [v.label for v in gates if v.mutation and not v.mutation.gate_passed]
        out.append(
            f"Mutation gate: failed on {', '.join(failed)}."
            if failed
            else f"Mutation gate passed on all {len(gates)} versions with mutation reports."
        )
    return out


def _target_of(m: Matrix, prop: str) -> str:
    for v in m.versions:
        if prop in v.verdicts:
            return v.target
    return ""


# --------------------------------------------------------------------------- markdown


def _md_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _fence(text: str) -> str:
    longest = max((len(r) for r in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _link(target: Path, out_dir: Path) -> str:
    """A relative link from ``out_dir`` to ``target`` (URL-quoted, forward slashes)."""
    rel = os.path.relpath(target.resolve(), out_dir.resolve())
    return quote(Path(rel).as_posix())


def _verdict_md(verdict: str) -> str:
    sym, _ = MARKS.get(verdict, ("?", ""))
    return f"**{sym} {verdict}**" if verdict == FAILS else f"{sym} {verdict}"


def _score_md(v: VersionReport, kind: str) -> str:
    if not v.mutation:
        return "–"
    ks = v.mutation.kinds.get(kind) if kind != "all" else v.mutation.overall
    return "–" if ks is None else f"{_pct(ks.score)} ({ks.detected}/{ks.total - ks.equivalent})"


_SHORT_KIND = {"removed-write": "rw", "wrong-comparison": "wc", "other": "other"}


def _peer_md(v: VersionReport) -> str:
    """The peer suite's score on the same mutants: all kinds, then per kind."""
    peer = v.mutation.peer if v.mutation else None
    if not peer:
        return "–"
    if "total" not in peer:
        return f"not run: {peer.get('error') or '?'}"
    t = peer["total"]
    per = ", ".join(
        f"{_SHORT_KIND.get(k, k)} {_ratio(r['peer'], r['mutants'])}"
        for k, r in peer["by_kind"].items()
    )
    overall = _ratio(t["peer"], t["mutants"])
    return f"{overall} ({t['peer']}/{t['mutants']}; {per})"


def _possessive(name: str) -> str:
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def _ratio(a: int, b: int) -> str:
    return _pct(100.0 * a / b if b else None)


def _has_peer(m: Matrix, target: str) -> bool:
    return any(v.mutation and v.mutation.peer for v in m.of(target))


def _kinds(m: Matrix, target: str) -> list[str]:
    seen: dict[str, None] = {}
    for v in m.of(target):
        if v.mutation:
            seen.update(dict.fromkeys(v.mutation.kinds))
    return list(seen)


def to_markdown(m: Matrix, out_dir: Path) -> str:
    lines = ["# Release audit matrix", ""]
    lines += [" ".join(summary_lines(m)), ""]
    lines += [
        "Legend: ✓ holds · **✗ fails** · – not checked. Known findings are the catalogue in "
        "`ctxaudit/findings.py`, each checked on every version; new findings are failures "
        "outside their regions.",
        "",
    ]
    for t in m.targets:
        vs = m.of(t)
        names = PROPERTIES.get(t, {})
        lines += [f"## Verdicts: {t}", ""]
        lines.append("| property | " + " | ".join(v.version for v in vs) + " |")
        lines.append("|---|" + "---|" * len(vs))
        lines.append(
            "| **status** | "
            + " | ".join(
                "suite error" if v.suite_error else ("ok" if v.ok else "**FAILS**") for v in vs
            )
            + " |"
        )
        for p in m.properties(t):
            label = f"{p} {names[p]}" if p in names else p
            lines.append(
                f"| {_md_cell(label)} | "
                + " | ".join(_verdict_md(v.verdicts.get(p, NOT_CHECKED)) for v in vs)
                + " |"
            )
        lines.append(
            "| known findings affecting | "
            + " | ".join(", ".join(k.id for k in v.affecting) or "none" for v in vs)
            + " |"
        )
        lines.append("| new findings | " + " | ".join(str(len(v.findings)) for v in vs) + " |")
        for kind in _kinds(m, t):
            lines.append(
                f"| mutation score: {kind} | " + " | ".join(_score_md(v, kind) for v in vs) + " |"
            )
        if _has_peer(m, t):
            lines.append(
                f"| same mutants, {_possessive(t)} own tests | "
                + " | ".join(_md_cell(_peer_md(v)) for v in vs)
                + " |"
            )
        lines.append("| reports | " + " | ".join(_report_links_md(v, out_dir) for v in vs) + " |")
        lines.append("")
    lines += _known_md(m)
    lines += _changes_md(m)
    lines += ["## Per version", ""]
    for v in m.versions:
        lines += _version_md(v, out_dir)
    return "\n".join(lines).rstrip() + "\n"


def _report_links_md(v: VersionReport, out_dir: Path) -> str:
    links = []
    md = v.dir / "findings.md"
    if md.exists():
        links.append(f"[findings]({_link(md, out_dir)})")
    if v.mutation:
        if v.mutation.md_path:
            links.append(f"[mutation]({_link(v.mutation.md_path, out_dir)})")
        links.append(f"[mutation.json]({_link(v.mutation.json_path, out_dir)})")
    return " · ".join(links) or "–"


def _known_state_text(state: bool | None) -> str:
    return {True: "**✗ affects**", False: "✓ no", None: "– not checked"}[state]


def _runs_text(row: KnownRow) -> tuple[str, str]:
    runs = row.runs()
    if not runs:
        return "none", ""
    spans = ", ".join(a if a == b else f"{a}–{b}" for a, b, _ in runs)
    fixed = ", ".join(f for _, _, f in runs if f)
    return spans, fixed


def _known_md(m: Matrix) -> list[str]:
    lines = ["## Known findings × versions", ""]
    if not m.known:
        return lines + ["No report lists known findings.", ""]
    for t in m.targets:
        rows = [r for r in m.known if r.target == t]
        if not rows:
            continue
        vs = m.of(t)
        lines += [f"### {t}", ""]
        lines.append(
            "| finding | property | "
            + " | ".join(v.version for v in vs)
            + " | affects | fixed in |"
        )
        lines.append("|---|---|" + "---|" * (len(vs) + 2))
        for r in rows:
            spans, fixed = _runs_text(r)
            lines.append(
                f"| {r.id} | {r.prop} | "
                + " | ".join(_known_state_text(r.states[v.version]) for v in vs)
                + f" | {spans} | {fixed or '–'} |"
            )
        lines.append("")
    return lines


def _change_lines(c: Change) -> list[str]:
    out = []
    if c.appeared:
        out.append("Known findings appeared: " + ", ".join(c.appeared))
    if c.fixed:
        out.append("Known findings fixed: " + ", ".join(c.fixed))
    for p, a, b in c.verdicts:
        out.append(f"{p}: {MARKS.get(a, ('?', ''))[0]} {a} → {MARKS.get(b, ('?', ''))[0]} {b}")
    na, nb = c.new_findings
    if na != nb:
        out.append(f"New findings: {na} → {nb} ({nb - na:+d})")
    for kind, sa, sb in c.scores:
        out.append(f"Mutation score {kind}: {_pct(sa)} → {_pct(sb)}")
    return out or ["No change in verdicts, known findings or new-finding count."]


def _changes_md(m: Matrix) -> list[str]:
    lines = ["## What changed between consecutive versions", ""]
    if not m.changes:
        return lines + ["Only one version per target: nothing to compare.", ""]
    for c in m.changes:
        lines += [f"### {c.target} {c.before} → {c.after}", ""]
        lines += [f"- {_md_cell(x)}" for x in _change_lines(c)]
        lines.append("")
    return lines


def _headline(f: NewFinding) -> str:
    """``V1/V3: message``; the audit's messages often carry that prefix already."""
    props = "/".join(f.properties) or "?"
    return f.message if f.message.startswith(props + ":") else f"{props}: {f.message}"


def _known_heading(v: VersionReport) -> str:
    if not v.known:
        return "Known findings: none catalogued for this target (or not in this report)"
    return f"Known findings affecting this version: {len(v.affecting)} of {len(v.known)}"


def _status_text(v: VersionReport) -> str:
    if v.suite_error:
        return f"SUITE ERROR (exit status {v.exit_status})"
    if v.ok:
        return "all properties hold"
    return f"FAILS ({', '.join(v.failing)})"


def _run_text(v: VersionReport) -> str:
    seed = "none" if v.seed is None else str(v.seed)
    return f"profile {v.profile or '?'}, seed {seed}, {v.elapsed_s:g} s"


def _version_md(v: VersionReport, out_dir: Path) -> list[str]:
    lines = [f"### {v.label}: {_status_text(v)}", ""]
    lines += [f"{_run_text(v)}. Reports: {_report_links_md(v, out_dir)}.", ""]
    aff = v.affecting
    lines += [f"**{_known_heading(v)}.**", ""]
    for k in aff:
        reg = " (registered for this version)" if k.registered else ""
        lines.append(
            f"- **{k.id}** ({k.prop}){reg}: {_md_cell(k.summary)} Region: "
            f"{_md_cell(k.region)}. Reproduction: `{k.repro}`"
        )
    if aff:
        lines.append("")
    lines += [f"**New findings: {len(v.findings)}.**", ""]
    for i, f in enumerate(v.findings, 1):
        lines += [f"{i}. {_md_cell(_headline(f))} (test `{f.test}`)", ""]
        if f.reproduction:
            fence = _fence(f.reproduction)
            lines += [f"   {fence}text"]
            lines += [f"   {ln}" if ln else "" for ln in f.reproduction.splitlines()]
            lines += [f"   {fence}", ""]
    if v.mutation:
        mu = v.mutation
        if mu.gate_passed is None:
            gate = "gate unknown"
        elif mu.gate_passed:
            gate = "gate passed"
        else:
            gate = f"gate FAILED: {mu.gate_failures} gated mutants not killed"
        lines += [
            f"**Mutation score per kind** ({gate}):",
            "",
            "| kind | mutants | detected | not detected | equivalent | score |",
            "|---|---|---|---|---|---|",
        ]
        for ks in [*mu.kinds.values(), mu.overall]:
            lines.append(
                f"| {ks.kind} | {ks.total} | {ks.detected} | {ks.undetected} | "
                f"{ks.equivalent} | {_pct(ks.score)} |"
            )
        lines.append("")
    return lines


# --------------------------------------------------------------------------- html

_CSS = """
:root{--ok:#1e6b34;--okbg:#e3f3e7;--bad:#a4161a;--badbg:#fde3e4;--nc:#555;--ncbg:#eef0f2;
--line:#c9ced6;--ink:#1b1f24}
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);
margin:0 auto;padding:1rem 1.5rem 3rem;max-width:1400px}
h1{font-size:1.6rem;margin:.3rem 0}h2{margin-top:2.2rem;border-bottom:2px solid var(--line)}
h3{margin-bottom:.4rem}
.summary{border-left:6px solid var(--bad);background:#fff6f6;padding:.7rem 1rem;margin:.8rem 0}
.summary.pass{border-color:var(--ok);background:#f3fbf5}
.summary p{margin:.25rem 0}.big{font-size:1.15rem;font-weight:600}
nav a{margin-right:1rem}
table{border-collapse:collapse;margin:.5rem 0 1rem}
caption{text-align:left;caption-side:top;padding:.2rem 0}
th,td{border:1px solid var(--line);padding:.25rem .5rem;text-align:left;vertical-align:top}
thead th{background:#f4f6f8;position:sticky;top:0}
th[scope=row]{font-weight:500;white-space:nowrap}
td.holds,span.holds{background:var(--okbg);color:var(--ok)}
td.fails,span.fails{background:var(--badbg);color:var(--bad);font-weight:700}
td.nc,span.nc{background:var(--ncbg);color:var(--nc)}
td.c{text-align:center;white-space:nowrap}
span.holds,span.fails,span.nc{padding:0 .35rem;border-radius:3px}
.muted{color:#5b6470}.small{font-size:.85rem}
details{margin:.3rem 0 .6rem;border:1px solid var(--line);border-radius:4px;padding:.3rem .6rem}
summary{cursor:pointer}
pre{background:#f6f8fa;padding:.6rem;overflow:auto;font-size:.82rem;white-space:pre-wrap}
code{font-size:.88em}
.version{border-top:1px solid var(--line);padding-top:.4rem}
.chart{max-width:100%;height:auto}
ul.changes{margin:.2rem 0 1rem}
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _verdict_td(verdict: str) -> str:
    sym, cls = MARKS.get(verdict, ("?", "nc"))
    return f'<td class="c {cls}">{sym} {_e(verdict)}</td>'


def _badge(verdict: str, text: str | None = None) -> str:
    sym, cls = MARKS.get(verdict, ("?", "nc"))
    return f'<span class="{cls}">{sym} {_e(text or verdict)}</span>'


def _status_badge(v: VersionReport) -> str:
    if v.suite_error:
        return _badge(FAILS, "suite error")
    return _badge(HOLDS, "ok") if v.ok else _badge(FAILS, "FAILS")


def _a(href: str, text: str) -> str:
    return f'<a href="{_e(href)}">{_e(text)}</a>'


def _report_links_html(v: VersionReport, out_dir: Path) -> str:
    links = []
    md = v.dir / "findings.md"
    if md.exists():
        links.append(_a(_link(md, out_dir), "findings"))
    if v.mutation:
        if v.mutation.md_path:
            links.append(_a(_link(v.mutation.md_path, out_dir), "mutation"))
        links.append(_a(_link(v.mutation.json_path, out_dir), "mutation.json"))
    return " · ".join(links) or "–"


def _anchor(v: VersionReport) -> str:
    return "v-" + re.sub(r"[^A-Za-z0-9_.-]", "-", f"{v.target}-{v.version}")


def _grid_html(m: Matrix, t: str, out_dir: Path) -> list[str]:
    vs = m.of(t)
    names = PROPERTIES.get(t, {})
    out = [
        f'<table class="grid"><caption class="muted small">Verdict of each {_e(t)} property '
        "per version (✓ holds, ✗ fails, – not checked)</caption>",
        '<thead><tr><th scope="col">property</th>'
        + "".join(f'<th scope="col"><a href="#{_anchor(v)}">{_e(v.version)}</a></th>' for v in vs)
        + "</tr></thead><tbody>",
        '<tr><th scope="row">status</th>'
        + "".join(f'<td class="c">{_status_badge(v)}</td>' for v in vs)
        + "</tr>",
    ]
    for p in m.properties(t):
        label = f"<b>{_e(p)}</b> {_e(names[p])}" if p in names else f"<b>{_e(p)}</b>"
        out.append(
            f'<tr><th scope="row">{label}</th>'
            + "".join(_verdict_td(v.verdicts.get(p, NOT_CHECKED)) for v in vs)
            + "</tr>"
        )
    out.append(
        '<tr><th scope="row">known findings affecting</th>'
        + "".join(
            f'<td class="c">{len(v.affecting)}</td>'
            if v.affecting
            else '<td class="c muted">0</td>'
            for v in vs
        )
        + "</tr>"
    )
    out.append(
        '<tr><th scope="row">new findings</th>'
        + "".join(f'<td class="c">{len(v.findings)}</td>' for v in vs)
        + "</tr>"
    )
    for kind in _kinds(m, t):
        out.append(
            f'<tr><th scope="row">mutation score: {_e(kind)}</th>'
            + "".join(f'<td class="c">{_e(_score_md(v, kind))}</td>' for v in vs)
            + "</tr>"
        )
    if _has_peer(m, t):
        out.append(
            f'<tr><th scope="row">same mutants, {_e(_possessive(t))} own tests</th>'
            + "".join(f'<td class="c small">{_e(_peer_md(v))}</td>' for v in vs)
            + "</tr>"
        )
    out.append(
        '<tr><th scope="row">reports</th>'
        + "".join(f'<td class="c small">{_report_links_html(v, out_dir)}</td>' for v in vs)
        + "</tr>"
    )
    out.append("</tbody></table>")
    return out


def _known_html(m: Matrix) -> list[str]:
    out = ['<h2 id="known">Known findings × versions</h2>']
    if not m.known:
        return [*out, "<p>No report lists known findings.</p>"]
    out.append(
        '<p class="muted">Each known finding (<code>ctxaudit/findings.py</code>) is checked on '
        "every version by its regression test: ✗ affects, ✓ does not reproduce, – not "
        "checked. Registered: the finding is registered for that version in the catalogue.</p>"
    )
    for t in m.targets:
        rows = [r for r in m.known if r.target == t]
        if not rows:
            continue
        vs = m.of(t)
        out.append(f"<h3>{_e(t)}</h3>")
        out.append(
            '<table><thead><tr><th scope="col">finding</th><th scope="col">property</th>'
            + "".join(f'<th scope="col">{_e(v.version)}</th>' for v in vs)
            + '<th scope="col">affects</th><th scope="col">fixed in</th></tr></thead><tbody>'
        )
        for r in rows:
            spans, fixed = _runs_text(r)
            cells = []
            for v in vs:
                s = r.states[v.version]
                reg = " (registered)" if v.version in r.registered else ""
                if s is None:
                    cells.append('<td class="c nc">– not checked</td>')
                elif s:
                    cells.append(f'<td class="c fails">✗ affects{reg}</td>')
                else:
                    cells.append(f'<td class="c holds">✓ no{reg}</td>')
            out.append(
                f'<tr><th scope="row" title="{_e(r.summary)}">{_e(r.id)}</th>'
                f"<td>{_e(r.prop)}</td>"
                + "".join(cells)
                + f"<td>{_e(spans)}</td><td>{_e(fixed or '–')}</td></tr>"
            )
        out.append("</tbody></table>")
    return out


def _changes_html(m: Matrix) -> list[str]:
    out = ['<h2 id="changes">What changed between consecutive versions</h2>']
    if not m.changes:
        return [*out, "<p>Only one version per target: nothing to compare.</p>"]
    out.append(
        '<table><thead><tr><th scope="col">from → to</th><th scope="col">known findings'
        '</th><th scope="col">verdicts</th><th scope="col">new findings</th>'
        '<th scope="col">mutation score</th></tr></thead><tbody>'
    )
    for c in m.changes:
        known = []
        if c.appeared:
            known.append(_badge(FAILS, "appeared") + " " + _e(", ".join(c.appeared)))
        if c.fixed:
            known.append(_badge(HOLDS, "fixed") + " " + _e(", ".join(c.fixed)))
        verdicts = [f"{_e(p)}: {_badge(a)} → {_badge(b)}" for p, a, b in c.verdicts]
        na, nb = c.new_findings
        nf = f"{na} → {nb} ({nb - na:+d})" if na != nb else f"{nb} (no change)"
        sc = [f"{_e(k)}: {_pct(a)} → {_pct(b)}" for k, a, b in c.scores]
        out.append(
            f'<tr><th scope="row">{_e(c.target)} {_e(c.before)} → {_e(c.after)}</th>'
            f"<td>{'<br>'.join(known) or '<span class=muted>no change</span>'}</td>"
            f"<td>{'<br>'.join(verdicts) or '<span class=muted>no change</span>'}</td>"
            f"<td>{_e(nf)}</td>"
            f"<td>{'<br>'.join(sc) or '<span class=muted>–</span>'}</td></tr>"
        )
    out.append("</tbody></table>")
    return out


def _version_html(v: VersionReport, out_dir: Path) -> list[str]:
    out = [
        f'<section class="version" id="{_anchor(v)}"><h3>{_e(v.label)} {_status_badge(v)}</h3>',
        f'<p class="small muted">{_e(_run_text(v))}. Reports: {_report_links_html(v, out_dir)}</p>',
    ]
    if v.failing:
        out.append(
            "<p>Failing properties: " + " ".join(_badge(FAILS, p) for p in v.failing) + "</p>"
        )
    aff = v.affecting
    out.append(f"<h4>{_e(_known_heading(v))}</h4>")
    if aff:
        out.append("<ul>")
        for k in aff:
            reg = " <em>(registered for this version)</em>" if k.registered else ""
            out.append(
                f"<li><b>{_e(k.id)}</b> ({_e(k.prop)}){reg}: {_e(k.summary)} "
                f'<br><span class="small">Region: {_e(k.region)}. Reproduction: '
                f"<code>{_e(k.repro)}</code></span></li>"
            )
        out.append("</ul>")
    out.append(f"<h4>New findings: {len(v.findings)}</h4>")
    for i, f in enumerate(v.findings, 1):
        body = (
            f"Minimal reproduction (Hypothesis, shrunk):</p><pre>{_e(f.reproduction)}</pre>"
            if f.reproduction
            else "No shrunk reproduction in the report (see the test).</p>"
        )
        out.append(
            f"<details><summary><b>{i}.</b> {_e(_headline(f))}</summary>"
            f'<p class="small">Test: <code>{_e(f.test)}</code>. {body}</details>'
        )
    if v.mutation:
        mu = v.mutation
        if mu.gate_passed is None:
            gate = ""
        elif mu.gate_passed:
            gate = " " + _badge(HOLDS, "gate passed")
        else:
            gate = " " + _badge(FAILS, f"gate failed: {mu.gate_failures} gated mutants not killed")
        out.append(f"<h4>Mutation score per kind{gate}</h4>")
        out.append(
            '<table><thead><tr><th scope="col">kind</th><th scope="col">mutants</th>'
            '<th scope="col">detected (killed, timeout)</th><th scope="col">not detected '
            '(survived, no coverage)</th><th scope="col">equivalent (excluded)</th>'
            '<th scope="col">score</th></tr></thead><tbody>'
        )
        for ks in [*mu.kinds.values(), mu.overall]:
            out.append(
                f'<tr><th scope="row">{_e(ks.kind)}</th><td>{ks.total}</td><td>{ks.detected}'
                f"</td><td>{ks.undetected}</td><td>{ks.equivalent}</td>"
                f"<td><b>{_e(_pct(ks.score))}</b></td></tr>"
            )
        out.append("</tbody></table>")
    out.append("</section>")
    return out


# chart ------------------------------------------------------------------------------

_SERIES = (  # (label, fill, pattern id or "")
    ("failing properties", "#a4161a", ""),
    ("known findings", "#e07b00", "hatch"),
    ("new findings", "#5a3e9b", "dots"),
)
_KIND_STYLE = {  # kind -> (colour, dash, marker, short label)
    "removed-write": ("#0b5cad", "", "circle", "rw"),
    "wrong-comparison": ("#b3006b", "6 3", "square", "wc"),
    "other": ("#4d5560", "2 3", "triangle", "oth"),
}
_DEFAULT_STYLE = ("#333333", "1 2", "diamond", "")


def _style(kind: str) -> tuple[str, str, str, str]:
    colour, dash, shape, short = _KIND_STYLE.get(kind, _DEFAULT_STYLE)
    return colour, dash, shape, short or kind[:4]


def _marker(shape: str, x: float, y: float, colour: str) -> str:
    if shape == "square":
        return f'<rect x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8" fill="{colour}"/>'
    if shape == "triangle":
        pts = f"{x:.1f},{y - 5:.1f} {x - 5:.1f},{y + 4:.1f} {x + 5:.1f},{y + 4:.1f}"
        return f'<polygon points="{pts}" fill="{colour}"/>'
    if shape == "diamond":
        pts = f"{x:.1f},{y - 5:.1f} {x + 5:.1f},{y:.1f} {x:.1f},{y + 5:.1f} {x - 5:.1f},{y:.1f}"
        return f'<polygon points="{pts}" fill="{colour}"/>'
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{colour}"/>'


def chart_svg(m: Matrix) -> str:
    """Grouped bars (failing properties, known findings, new findings) per version and,
    below, the mutation score per kind (lines, one segment per target)."""
    vs = m.versions
    n = len(vs)
    left, right, slot = 56, 230, 104
    width = left + right + slot * max(n, 1)
    has_scores = any(v.mutation for v in vs)
    bar_top, bar_h = 40, 200
    score_top = bar_top + bar_h + 84
    score_h = 160 if has_scores else 0
    height = score_top + score_h + (60 if has_scores else -30)
    counts = [(len(v.failing), len(v.affecting), len(v.findings)) for v in vs]
    peak = max([c for row in counts for c in row] + [1])
    step = max(1, -(-peak // 5))
    ymax = step * -(-peak // step)

    def xc(i: int) -> float:
        return left + slot * i + slot / 2

    def yb(value: float) -> float:
        return bar_top + bar_h - bar_h * value / ymax

    p = [
        f'<svg class="chart" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        'aria-labelledby="chart-title chart-desc">',
        '<title id="chart-title">Findings and mutation score across versions</title>',
        f'<desc id="chart-desc">{_e(_chart_desc(m))}</desc>',
        "<defs>"
        '<pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><rect width="6" height="6" fill="#e07b00"/>'
        '<line x1="0" y1="0" x2="0" y2="6" stroke="#fff" stroke-width="2"/></pattern>'
        '<pattern id="dots" width="5" height="5" patternUnits="userSpaceOnUse">'
        '<rect width="5" height="5" fill="#5a3e9b"/><circle cx="2.5" cy="2.5" r="1.1" '
        'fill="#fff"/></pattern></defs>',
        '<g font-family="system-ui,sans-serif" font-size="12" fill="#1b1f24">',
        f'<text x="{left}" y="22" font-size="14" font-weight="600">Failing properties and '
        "findings per version</text>",
    ]
    for k in range(0, ymax + 1, step):
        y = yb(k)
        p.append(
            f'<line x1="{left}" x2="{left + slot * n}" y1="{y:.1f}" y2="{y:.1f}" '
            'stroke="#e3e6ea"/>'
            f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{k}</text>'
        )
    bw = 20
    for i, (v, row) in enumerate(zip(vs, counts, strict=True)):
        x0 = xc(i) - 1.5 * bw - 3
        for j, (value, (label, colour, pattern)) in enumerate(zip(row, _SERIES, strict=True)):
            x = x0 + j * (bw + 3)
            fill = f"url(#{pattern})" if pattern else colour
            y = yb(value)
            p.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{bw}" height="{bar_top + bar_h - y:.1f}" '
                f'fill="{fill}" stroke="{colour}"><title>{_e(v.label)}: {value} '
                f"{_e(label)}</title></rect>"
                f'<text x="{x + bw / 2:.1f}" y="{y - 4:.1f}" text-anchor="middle" '
                f'font-size="11">{value}</text>'
            )
        p.append(
            f'<text x="{xc(i):.1f}" y="{bar_top + bar_h + 16}" text-anchor="middle">'
            f"{_e(v.version)}</text>"
            f'<text x="{xc(i):.1f}" y="{bar_top + bar_h + 30}" text-anchor="middle" '
            f'font-size="11" fill="#5b6470">{_e(v.target)}</text>'
        )
        if i and vs[i - 1].target != v.target:
            xs = left + slot * i
            p.append(
                f'<line x1="{xs}" x2="{xs}" y1="{bar_top - 6}" y2="{score_top + score_h}" '
                'stroke="#8a929c" stroke-dasharray="4 3"/>'
            )
    p.append(
        f'<line x1="{left}" x2="{left + slot * n}" y1="{bar_top + bar_h}" '
        f'y2="{bar_top + bar_h}" stroke="#1b1f24"/>'
    )
    lx = left + slot * n + 16
    for j, (label, colour, pattern) in enumerate(_SERIES):
        y = bar_top + 10 + j * 22
        fill = f"url(#{pattern})" if pattern else colour
        p.append(
            f'<rect x="{lx}" y="{y - 10}" width="14" height="14" fill="{fill}" '
            f'stroke="{colour}"/><text x="{lx + 20}" y="{y + 1}">{_e(label)}</text>'
        )
    if has_scores:
        p += _score_chart(m, left, slot, score_top, score_h, lx)
    p.append("</g></svg>")
    return "\n".join(p)


def _score_chart(m: Matrix, left: int, slot: int, top: int, h: int, lx: int) -> list[str]:
    vs = m.versions
    n = len(vs)

    def xc(i: int) -> float:
        return left + slot * i + slot / 2

    def ys(value: float) -> float:
        return top + h - h * value / 100

    p = [
        f'<text x="{left}" y="{top - 18}" font-size="14" font-weight="600">Mutation score per '
        "kind (% of mutants detected, equivalents excluded)</text>"
    ]
    for k in range(0, 101, 25):
        y = ys(k)
        p.append(
            f'<line x1="{left}" x2="{left + slot * n}" y1="{y:.1f}" y2="{y:.1f}" '
            'stroke="#e3e6ea"/>'
            f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{k}%</text>'
        )
    kinds = list(dict.fromkeys(k for v in vs if v.mutation for k in v.mutation.kinds))
    for j, kind in enumerate(kinds):
        colour, dash, shape, short = _style(kind)
        dx = (j - (len(kinds) - 1) / 2) * 7  # side by side, so equal scores stay visible
        segments: list[list[tuple[float, float, str]]] = []
        prev_target = None
        for i, v in enumerate(vs):
            ks = v.mutation.kinds.get(kind) if v.mutation else None
            if ks is None or ks.score is None:
                prev_target = None
                continue
            if prev_target != v.target:
                segments.append([])
            title = f"{v.label}: {kind} {_pct(ks.score)}"
            segments[-1].append((xc(i) + dx, ys(ks.score), title))
            prev_target = v.target
        for seg in segments:
            if len(seg) > 1:
                pts = " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in seg)
                dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
                p.append(
                    f'<polyline points="{pts}" fill="none" stroke="{colour}" '
                    f'stroke-width="2"{dash_attr}/>'
                )
            for x, y, title in seg:
                p.append(f"<g><title>{_e(title)}</title>{_marker(shape, x, y, colour)}</g>")
        y = top + 10 + j * 22
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        p.append(
            f'<line x1="{lx}" x2="{lx + 24}" y1="{y - 3}" y2="{y - 3}" stroke="{colour}" '
            f'stroke-width="2"{dash_attr}/>{_marker(shape, lx + 12, y - 3, colour)}'
            f'<text x="{lx + 30}" y="{y + 1}">{_e(kind)} ({_e(short)})</text>'
        )
    # the score values as text under each version (readable without the lines)
    for i, v in enumerate(vs):
        if not v.mutation:
            p.append(
                f'<text x="{xc(i):.1f}" y="{top + h + 18}" text-anchor="middle" '
                'font-size="11" fill="#5b6470">no mutation run</text>'
            )
            continue
        for j, ks in enumerate(v.mutation.kinds.values()):
            p.append(
                f'<text x="{xc(i):.1f}" y="{top + h + 18 + 13 * j}" text-anchor="middle" '
                f'font-size="11" fill="{_style(ks.kind)[0]}">'
                f"{_e(_style(ks.kind)[3])} {_e(_pct(ks.score))}</text>"
            )
    p.append(
        f'<line x1="{left}" x2="{left + slot * n}" y1="{top + h}" y2="{top + h}" stroke="#1b1f24"/>'
    )
    return p


def _chart_desc(m: Matrix) -> str:
    parts = []
    for v in m.versions:
        text = (
            f"{v.label}: {len(v.failing)} failing properties, {len(v.affecting)} known "
            f"findings, {len(v.findings)} new findings"
        )
        if v.mutation:
            text += ", mutation score " + ", ".join(
                f"{k} {_pct(ks.score)}" for k, ks in v.mutation.kinds.items()
            )
        parts.append(text)
    return "; ".join(parts) + "."


def to_html(m: Matrix, out_dir: Path) -> str:
    failing = any(not v.ok for v in m.versions)
    lines = summary_lines(m)
    head = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>ctxaudit release audit matrix</title>",
        f"<style>{_CSS}</style></head><body>",
        "<header><h1>Release audit matrix</h1>",
        f'<div class="summary{"" if failing else " pass"}" role="status">'
        f'<p class="big">{"✗ FAIL" if failing else "✓ PASS"}: {_e(lines[0])}</p>'
        + "".join(f"<p>{_e(x)}</p>" for x in lines[1:])
        + "</div>",
        '<nav aria-label="sections">'
        + "".join(_a(f"#grid-{t}", f"verdicts: {t}") for t in m.targets)
        + _a("#chart", "chart")
        + _a("#known", "known findings × versions")
        + _a("#changes", "what changed")
        + _a("#versions", "per version")
        + "</nav></header><main>",
    ]
    body: list[str] = []
    for t in m.targets:
        body.append(f'<h2 id="grid-{_e(t)}">Verdicts: {_e(t)}</h2>')
        body += _grid_html(m, t, out_dir)
    body += ['<h2 id="chart">Chart</h2>', chart_svg(m)]
    body += _known_html(m)
    body += _changes_html(m)
    body.append('<h2 id="versions">Per version</h2>')
    for v in m.versions:
        body += _version_html(v, out_dir)
    tail = [
        '</main><footer class="muted small"><p>Written by <code>python -m ctxaudit.matrix'
        "</code> from each version's findings.json and mutation.json. Property names "
        "as in SPEC.md (B, V: gitreins; S, C: ledger).</p>"
        "</footer></body></html>",
    ]
    return "\n".join(head + body + tail) + "\n"


# --------------------------------------------------------------------------- writing


def write(matrix: Matrix, out_dir: Path) -> tuple[Path, Path]:
    """Write ``out_dir/matrix.md`` and ``out_dir/matrix.html``; links to each version's
    reports are relative to ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    md = out_dir / "matrix.md"
    page = out_dir / "matrix.html"
    md.write_text(to_markdown(matrix, out_dir))
    page.write_text(to_html(matrix, out_dir))
    return md, page


def find_reports(reports_dir: Path) -> list[Path]:
    return sorted(p.parent for p in reports_dir.glob("*/findings.json"))


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ctxaudit.matrix",
        description="Write matrix.md and matrix.html from REPORTS_DIR/*/findings.json.",
    )
    parser.add_argument("reports_dir", type=Path, metavar="REPORTS_DIR")
    parser.add_argument("--out", type=Path, help="output folder (default: REPORTS_DIR)")
    args = parser.parse_args(None if argv is None else list(argv))
    dirs = find_reports(args.reports_dir)
    if not dirs:
        print(f"ctxaudit.matrix: no */findings.json under {args.reports_dir}", file=sys.stderr)
        return 2
    try:
        matrix = build(dirs)
    except MatrixError as exc:
        print(f"ctxaudit.matrix: {exc}", file=sys.stderr)
        return 2
    md, page = write(matrix, args.out or args.reports_dir)
    print(f"{md}\n{page}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
