"""What the matrix templates say about the data: phrases, links, anchors and the summary.

The templates (``ctxaudit/templates/matrix.md.j2``, ``matrix.html.j2`` and their
partials) lay out; the words they show for a verdict, a score, a change come from
here, so Markdown and HTML say the same thing.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from ctxaudit.audit import PROPERTIES
from ctxaudit.matrix.model import (
    COULD_NOT_CHECK,
    FAILS,
    HOLDS,
    MARKS,
    NOT_CHECKED,
    Change,
    KnownRow,
    Matrix,
    NewFinding,
    VersionReport,
)
from ctxaudit.templating import pct

_SHORT_KIND = {"removed-write": "rw", "wrong-comparison": "wc", "other": "other"}


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _version_span(vs: list[VersionReport]) -> str:
    if len(vs) == 1:
        return vs[0].version
    return f"{vs[0].version} … {vs[-1].version}"


def unexplained(v: VersionReport) -> list[str]:
    """What fails on ``v`` beyond its known findings: its new findings, then any failing
    property that no known finding affecting it names and no failure the fix audit
    attributed to one breaks."""
    known = {p for k in v.affecting for p in k.prop.split("/")} | set(v.attributed_props)
    out = [f"new finding ({'/'.join(f.properties) or '?'})" for f in v.findings]
    return out + [f"{p} fails" for p in v.failing if p not in known and not v.findings]


def _known_line(m: Matrix) -> str | None:
    """Known findings: how many reproduce where, whether their fixes are verified, and
    whether the fully fixed trees hold."""
    affected = [v for v in m.versions if v.affecting]
    if not affected:
        return None
    ids = {k.id for v in affected for k in v.affecting}
    text = (
        f"Known findings: {plural(len(ids), 'known finding')} "
        f"reproduce{'s' if len(ids) == 1 else ''} on "
        f"{len(affected)} of {len(m.versions)} versions"
    )
    audited = [v for v in affected if v.fixes]
    if audited:
        missing = Counter(
            (x.id, x.status)
            for v in audited
            for x in v.fixes
            if x.status not in ("fix verified", "not needed")
        )
        bad = [
            f"{fid} ({status}, {plural(n, 'version')})"
            for (fid, status), n in sorted(missing.items(), key=lambda kv: (-kv[1], kv[0]))
        ]
        fixed = [v for v in audited if v.fixed is not None]
        hold = [v for v in fixed if v.fixed is not None and v.fixed.ok]
        text += (
            "; each fix verified on every version it is needed"
            if not bad
            else f"; no verified fix: {', '.join(bad)}"
        )
        text += f"; the fully fixed tree holds every property on {len(hold)} of {len(fixed)}"
        if len(hold) < len(fixed):
            text += " (fails: " + ", ".join(v.label for v in fixed if v not in hold) + ")"
    return text + "."


def summary_lines(m: Matrix) -> list[str]:
    """Plain-text sentences for the top of both reports: what a release manager asks
    first (new findings, then the known ones and their fixes), then the detail."""
    if not m.versions:
        return ["No reports found."]
    per = ", ".join(f"{len(m.of(t))} {t} ({_version_span(m.of(t))})" for t in m.targets)
    failing = [v for v in m.versions if v.outcome == FAILS]
    unchecked = [v for v in m.versions if v.outcome == COULD_NOT_CHECK]
    out = [f"{plural(len(m.versions), 'target version')} audited: {per}."]
    new = [(v, unexplained(v)) for v in m.versions if unexplained(v)]
    if new:
        names = ", ".join(f"{v.label} ({', '.join(why)})" for v, why in new)
        out.append(f"New failures on {len(new)} of {len(m.versions)}: {names}.")
    else:
        out.append("New findings: none; every failure is a known finding's.")
    known = _known_line(m)
    if known:
        out.append(known)
    if failing:
        names = ", ".join(f"{v.label} ({len(v.failing)} failing)" for v in failing)
        out.append(f"{len(failing)} of {len(m.versions)} fail, known findings included: {names}.")
    if unchecked:
        names = ", ".join(f"{v.label} ({View.first_reason(v)})" for v in unchecked)
        out.append(
            f"ctxaudit could not check {len(unchecked)} of {len(m.versions)} (neither holds "
            f"nor fails): {names}."
        )
    if not failing and not unchecked:
        out.append("Every property holds on every version.")
    if m.skipped:
        out.append(
            f"Left out, unreadable: {', '.join(f'{s.dir.name}/{s.file}' for s in m.skipped)}."
        )
    if failing:
        worst = max(failing, key=lambda v: (len(v.failing), len(v.findings), v.label))
        props = Counter(p for v in m.versions for p in v.failing)
        top = ", ".join(
            f"{p} (fails on {n} of {sum(p in v.verdicts for v in m.versions)})"
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


def _ratio(a: int, b: int) -> str:
    return pct(100.0 * a / b if b else None)


@dataclass(frozen=True)
class Link:
    text: str
    href: str  # relative to the folder the matrix is written to, URL-quoted


@dataclass
class View:
    """The matrix as the templates see it: ``m`` plus what to call things."""

    m: Matrix
    out_dir: Path

    @property
    def summary(self) -> list[str]:
        return summary_lines(self.m)

    @property
    def failing(self) -> bool:
        """Some version fails or could not be checked: the page does not say PASS."""
        return any(v.outcome != HOLDS for v in self.m.versions)

    @property
    def state(self) -> str:
        """The page's headline class: ``fail`` (a new failure or a failed mutation gate),
        ``cnc`` (something could not be checked), ``known`` (known findings only) or
        ``pass``."""
        vs = self.m.versions
        gates = [v.mutation.gate_passed for v in vs if v.mutation]
        if any(unexplained(v) for v in vs) or False in gates:
            return "fail"
        if any(v.outcome == COULD_NOT_CHECK for v in vs):
            return "cnc"
        return "known" if any(v.outcome == FAILS for v in vs) else "pass"

    @property
    def banner(self) -> str:
        """The page's verdict in words."""
        return {
            "fail": "✗ FAIL",
            "cnc": "? COULD NOT CHECK",
            "known": "✓ NO NEW FINDING (known findings only)",
            "pass": "✓ PASS",
        }[self.state]

    @staticmethod
    def first_reason(v: VersionReport) -> str:
        """Why ctxaudit could not check (the first thing it could not)."""
        if v.unchecked:
            return v.unchecked[0].why or "?"
        if v.suite_error:
            return f"the suite did not run (exit status {v.exit_status})"
        return f"could not check {', '.join(v.cannot_check)}"

    @staticmethod
    def status_cell(v: VersionReport) -> tuple[str, str]:
        """(verdict for the mark and colour, word) of a version's status cell."""
        if v.outcome == FAILS:
            return FAILS, "FAILS"
        if v.outcome == COULD_NOT_CHECK:
            return COULD_NOT_CHECK, "could not check"
        return HOLDS, "ok"

    def names(self, target: str) -> dict[str, str]:
        return PROPERTIES.get(target, {})

    def kinds(self, target: str) -> list[str]:
        seen: dict[str, None] = {}
        for v in self.m.of(target):
            if v.mutation:
                seen.update(dict.fromkeys(v.mutation.kinds))
        return list(seen)

    def has_peer(self, target: str) -> bool:
        return any(v.mutation and v.mutation.peer for v in self.m.of(target))

    def known_rows(self, target: str) -> list[KnownRow]:
        return [r for r in self.m.known if r.target == target]

    # ------------------------------------------------------------------ words

    @staticmethod
    def mark(verdict: str) -> str:
        return MARKS.get(verdict, ("?", ""))[0]

    @staticmethod
    def css(verdict: str) -> str:
        return MARKS.get(verdict, ("?", "nc"))[1]

    @staticmethod
    def verdict(v: VersionReport, prop: str) -> str:
        return v.verdicts.get(prop, NOT_CHECKED)

    @staticmethod
    def possessive(name: str) -> str:
        return f"{name}'" if name.endswith("s") else f"{name}'s"

    @staticmethod
    def score(v: VersionReport, kind: str) -> str:
        if not v.mutation:
            return "–"
        ks = v.mutation.kinds.get(kind) if kind != "all" else v.mutation.overall
        return "–" if ks is None else f"{pct(ks.score)} ({ks.detected}/{ks.total - ks.equivalent})"

    @staticmethod
    def peer(v: VersionReport) -> str:
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
        return f"{_ratio(t['peer'], t['mutants'])} ({t['peer']}/{t['mutants']}; {per})"

    @staticmethod
    def runs(row: KnownRow) -> tuple[str, str]:
        """(the affected spans, the versions they were fixed in) as text."""
        runs = row.runs()
        if not runs:
            return "none", ""
        spans = ", ".join(a if a == b else f"{a}–{b}" for a, b, _ in runs)
        fixed = ", ".join(f for _, _, f in runs if f)
        return spans, fixed

    @staticmethod
    def change_lines(c: Change) -> list[str]:
        out = []
        if c.appeared:
            out.append("Known findings appeared: " + ", ".join(c.appeared))
        if c.fixed:
            out.append("Known findings fixed: " + ", ".join(c.fixed))
        for p, a, b in c.verdicts:
            out.append(f"{p}: {View.mark(a)} {a} → {View.mark(b)} {b}")
        na, nb = c.new_findings
        if na != nb:
            out.append(f"New findings: {na} → {nb} ({nb - na:+d})")
        for kind, sa, sb in c.scores:
            out.append(f"Mutation score {kind}: {pct(sa)} → {pct(sb)}")
        return out or ["No change in verdicts, known findings or new-finding count."]

    @staticmethod
    def new_findings_change(c: Change) -> str:
        na, nb = c.new_findings
        return f"{na} → {nb} ({nb - na:+d})" if na != nb else f"{nb} (no change)"

    @staticmethod
    def headline(f: NewFinding) -> str:
        """``V1/V3: message``; the audit's messages often carry that prefix already."""
        props = "/".join(f.properties) or "?"
        return f.message if f.message.startswith(props + ":") else f"{props}: {f.message}"

    @staticmethod
    def known_heading(v: VersionReport) -> str:
        if not v.known:
            return "Known findings: none catalogued for this target (or not in this report)"
        return f"Known findings affecting this version: {len(v.affecting)} of {len(v.known)}"

    @staticmethod
    def status(v: VersionReport) -> str:
        if v.outcome == FAILS:
            more = f"; could not check {', '.join(v.cannot_check)}" if v.cannot_check else ""
            return f"FAILS ({', '.join(v.failing)}{more})"
        if v.outcome == COULD_NOT_CHECK:
            return f"COULD NOT CHECK: {View.first_reason(v)}"
        return "all properties hold"

    @staticmethod
    def run(v: VersionReport) -> str:
        seed = "none" if v.seed is None else str(v.seed)
        return f"profile {v.profile or '?'}, seed {seed}, {v.elapsed_s:g} s"

    @staticmethod
    def gate(v: VersionReport) -> str | None:
        """``gate passed``, ``gate FAILED: ...`` or None when the report does not say."""
        mu = v.mutation
        if mu is None or mu.gate_passed is None:
            return None
        on = f" on the fully fixed tree ({len(mu.fixes)} fixes)" if mu.fixes else ""
        if mu.gate_passed:
            return f"gate passed{on}"
        return f"gate FAILED{on}: {mu.gate_failures} gated mutants not killed"

    @staticmethod
    def anchor(v: VersionReport) -> str:
        return "v-" + re.sub(r"[^A-Za-z0-9_.-]", "-", f"{v.target}-{v.version}")

    def link(self, target: Path) -> str:
        """A relative link from the output folder (URL-quoted, forward slashes)."""
        rel = os.path.relpath(target.resolve(), self.out_dir.resolve())
        return quote(Path(rel).as_posix())

    # ------------------------------------------------------------------ fixes

    #: a fix's status, short, for a grid cell
    FIX_SHORT = {
        "fix verified": "✓ verified",
        "not needed": "–",
        "no fix": "✗ no fix",
        "does not apply": "✗ does not apply",
        "does not make the property hold": "✗ does not hold",
        "breaks another property": "✗ breaks another",
        "breaks the harness's own tests": "✗ breaks own tests",
        "not verified": "✗ not verified",
    }

    def fix_rows(self, target: str) -> list[tuple[str, str, dict[str, str]]]:
        """(finding, property, version -> short fix status) for every finding with a
        fix-audit row on some version of ``target``."""
        rows: dict[str, tuple[str, dict[str, str]]] = {}
        for v in self.m.of(target):
            for x in v.fixes:
                prop, cells = rows.setdefault(x.id, (x.prop, {}))
                cells[v.version] = self.FIX_SHORT.get(x.status, x.status)
        return [(i, p, c) for i, (p, c) in rows.items()]

    def has_fixes(self, target: str) -> bool:
        return any(v.fixes or v.fixed for v in self.m.of(target))

    @staticmethod
    def fixed_tree(v: VersionReport) -> str:
        """The fully fixed tree's verdict, short."""
        if v.fixed is None:
            return "–"
        if v.fixed.ok:
            return f"all hold (fixes: {len(v.fixed.applied)})"
        failing = ", ".join(v.fixed.failing) or f"{v.fixed.remaining} failures"
        return f"fails: {failing} (fixes: {len(v.fixed.applied)})"

    @staticmethod
    def unverified(v: VersionReport) -> list[tuple[str, str, str]]:
        """(finding, status, why) of each needed fix that is not verified on ``v``."""
        return [
            (x.id, x.status, x.detail)
            for x in v.fixes
            if x.status not in ("fix verified", "not needed")
        ]

    def combined_patch(self, v: VersionReport) -> list[Link]:
        if v.fixed is None or not v.fixed.combined_patch:
            return []
        return [Link("combined patch", self.link(v.dir / v.fixed.combined_patch))]

    def links(self, v: VersionReport) -> list[Link]:
        """The version's own reports: findings.md, mutation.md, mutation.json."""
        out = []
        md = v.dir / "findings.md"
        if md.exists():
            out.append(Link("findings", self.link(md)))
        if v.mutation:
            if v.mutation.md_path:
                out.append(Link("mutation", self.link(v.mutation.md_path)))
            out.append(Link("mutation.json", self.link(v.mutation.json_path)))
        return out


__all__ = ["FAILS", "Link", "View", "plural", "summary_lines"]
