"""Gate, scores and reports: ``mutation.json`` (mutation-testing-elements), ``mutation.md``."""

from __future__ import annotations

import contextlib
import json
import sys
from collections import Counter
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from mutation.operators import GATED_KINDS, KINDS

DETECTED = ("killed", "timeout", "crashed")
STATUSES = ("killed", "timeout", "crashed", "survived", "no-coverage", "flaky", "equivalent")
STRYKER_STATUS = {
    "killed": "Killed",
    "crashed": "Killed",
    "timeout": "Timeout",
    "survived": "Survived",
    "flaky": "Survived",
    "no-coverage": "NoCoverage",
    "equivalent": "Ignored",
    "pending": "Pending",
}
MTE_STATUSES = (
    "Killed",
    "Survived",
    "NoCoverage",
    "CompileError",
    "RuntimeError",
    "Timeout",
    "Ignored",
    "Pending",
)
THRESHOLDS = {"high": 100, "low": 80}


def shown_path(path: str) -> str:
    """A path as a report shows it: relative to the repository when inside it (so a
    committed report does not carry the machine's checkout path), else as it is."""
    if not path:
        return path
    repo = Path(__file__).resolve().parents[1]
    p = Path(path).resolve()
    if p.is_relative_to(repo):
        return p.relative_to(repo).as_posix() or "."
    prefix = sys.prefix
    if str(p).startswith(prefix):
        return "<venv>" + str(p)[len(prefix) :]
    return path


def gated(m: dict[str, Any]) -> bool:
    return m["kind"] in GATED_KINDS or m.get("catalogue") is not None


def apply_gate(doc: dict[str, Any], equivalents: dict[str, str]) -> dict[str, Any]:
    """Mark listed equivalents and decide the gate. Mutates and returns ``doc``."""
    ids = {m["id"] for m in doc["mutants"]}
    failures: list[str] = []
    stale: list[str] = []
    for m in doc["mutants"]:
        if m["status"] in DETECTED:
            if m["id"] in equivalents:
                stale.append(f"{m['id']}: listed as equivalent but {m['status']}")
            elif gated(m) and m.get("robust") == "seed-dependent":
                # a kill that another seed does not repeat does not pass the gate
                failures.append(m["id"])
            continue
        if m["id"] in equivalents and m["status"] in ("survived", "no-coverage"):
            m["status"] = "equivalent"
            m["reason"] = equivalents[m["id"]]
            continue
        if gated(m):
            failures.append(m["id"])
    stale += [f"{i}: listed as equivalent but no such mutant" for i in equivalents if i not in ids]
    doc["gate"] = {
        "passed": not failures and not doc.get("errors"),
        "failures": failures,
        "seeds": doc.get("seeds", [0]),
        "robust_only": len(doc.get("seeds", [0])) > 1,
    }
    doc["stale_equivalents"] = stale
    return doc


ROBUSTNESS = ("robust", "seed-dependent", "unchecked")


def robustness(mutants: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per kind, the detected gated mutants whose kill is robust (a seed-free test, or
    every seed), seed-dependent, or unchecked (one seed only)."""
    out: dict[str, dict[str, int]] = {}
    for m in mutants:
        if not gated(m) or m["status"] not in DETECTED:
            continue
        row = out.setdefault(m["kind"], dict.fromkeys(ROBUSTNESS, 0))
        row[m.get("robust") or "unchecked"] += 1
    return dict(sorted(out.items()))


def score(counts: Counter[str]) -> float | None:
    valid = sum(counts[s] for s in STATUSES if s != "equivalent")
    return None if valid == 0 else round(100.0 * sum(counts[s] for s in DETECTED) / valid, 1)


def summary(mutants: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    groups: dict[str, Counter[str]] = {}
    for m in mutants:
        groups.setdefault(m[key], Counter())[m["status"]] += 1
    return {
        g: {"total": sum(c.values()), **{s: c[s] for s in STATUSES}, "score": score(c)}
        for g, c in sorted(groups.items())
    }


def peer_summary(doc: dict[str, Any]) -> dict[str, Any] | None:
    """Our suite and the peer suite on the same mutants, per kind (None if no peer ran).

    Mutants excused as equivalent for our suite are left out of both denominators; a
    mutant the peer suite never reached counts as not detected, as for ours.
    """
    peer = doc.get("peer")
    if not peer:
        return None
    if "results" not in peer:
        return {"name": peer.get("name", "peer"), "error": peer.get("error", "did not run")}
    results = peer["results"]
    kinds: dict[str, dict[str, int]] = {}
    ours_only: list[str] = []
    theirs_only: list[str] = []
    for m in doc["mutants"]:
        if m["status"] == "equivalent" or m["id"] not in results:
            continue
        row = kinds.setdefault(m["kind"], {"mutants": 0, "ours": 0, "peer": 0})
        row["mutants"] += 1
        ours = m["status"] in DETECTED
        theirs = results[m["id"]][0] in DETECTED
        row["ours"] += ours
        row["peer"] += theirs
        if ours and not theirs:
            ours_only.append(m["id"])
        if theirs and not ours:
            theirs_only.append(m["id"])
    total = {k: sum(r[k] for r in kinds.values()) for k in ("mutants", "ours", "peer")}
    return {
        "name": peer["name"],
        "by_kind": dict(sorted(kinds.items())),
        "total": total,
        "killed_only_by_ours": len(ours_only),
        "killed_only_by_peer": theirs_only,
        "timings": peer.get("timings", {}),
        "baseline_tests": peer.get("baseline", {}).get("tests", 0),
        "baseline_failing": len(peer.get("baseline", {}).get("failing", [])),
        "error": peer.get("error"),
    }


def _framework() -> dict[str, Any]:
    deps = {}
    for name in ("mutmut", "libcst", "pytest", "hypothesis", "coverage"):
        with contextlib.suppress(PackageNotFoundError):
            deps[name] = version(name)
    return {"name": "ctxaudit mutation (mutmut engine)", "version": "1", "dependencies": deps}


def to_mte(doc: dict[str, Any]) -> dict[str, Any]:
    """The document in the mutation-testing-elements report schema (version 2)."""
    files: dict[str, Any] = {}
    for path, source in sorted(doc["sources"].items()):
        files[path] = {"language": "python", "source": source, "mutants": []}
    for m in sorted(doc["mutants"], key=lambda m: (m["file"], m["line"], m["id"])):
        entry: dict[str, Any] = {
            "id": m["id"],
            "mutatorName": f"{m['kind']}:{m['operator']}",
            "location": {
                "start": {"line": max(1, m["line"]), "column": max(1, m["column"])},
                "end": {"line": max(1, m["end_line"]), "column": max(1, m["end_column"])},
            },
            "status": STRYKER_STATUS[m["status"]],
            "replacement": m["replacement"],
            "description": (
                f"[{m['kind']}] {m['function']}: {m['original']} -> {m['replacement']}"
                + (
                    f" (catalogue {m['catalogue']}: {m['description']})"
                    if m.get("catalogue")
                    else ""
                )
            ),
            "duration": round(1000 * m.get("seconds", 0.0), 1),
        }
        reason = m.get("reason") or ""
        if m["status"] == "killed" and m.get("killed_by"):
            entry["killedBy"] = [m["killed_by"]]
            reason = reason or f"killed by {m['killed_by']}"
        if m.get("robust"):
            reason = f"{reason}; {m['robust']}: {m.get('robust_reason', '')}".lstrip("; ")
        if reason:
            entry["statusReason"] = reason
        if m.get("tests_completed") is not None:
            entry["testsCompleted"] = m["tests_completed"]
        files[m["file"]]["mutants"].append(entry)
    timings = doc.get("timings", {})
    return {
        "schemaVersion": "2",
        "thresholds": dict(THRESHOLDS),
        "projectRoot": shown_path(doc.get("root", "")),
        "files": files,
        "framework": _framework(),
        "performance": {
            "setup": round(1000 * timings.get("setup", 0.0)),
            "initialRun": round(1000 * timings.get("baseline", 0.0)),
            "mutation": round(1000 * timings.get("mutation", 0.0)),
        },
        "config": {
            "target": doc["target"],
            "version": doc["version"],
            "gate": doc["gate"],
            "by_kind": summary(doc["mutants"], "kind"),
            "seeds": doc.get("seeds", [0]),
            "robustness": robustness(doc["mutants"]),
            "cache": doc.get("cache"),
            "branch_coverage": doc.get("coverage"),
            "shards": doc.get("shards", 1),
            "suite": doc.get("suite"),
            "peer": peer_summary(doc),
        },
    }


def validate_mte(report: dict[str, Any]) -> list[str]:
    """Errors against the required shape of the mutation-testing-elements schema."""
    errors: list[str] = []
    for key in ("schemaVersion", "thresholds", "files"):
        if key not in report:
            errors.append(f"missing {key}")
    if errors:
        return errors
    if not isinstance(report["schemaVersion"], str):
        errors.append("schemaVersion is not a string")
    th = report["thresholds"]
    for key in ("high", "low"):
        if not isinstance(th.get(key), int) or not 0 <= th[key] <= 100:
            errors.append(f"thresholds.{key} is not an integer in 0..100")
    for path, f in report["files"].items():
        for key in ("language", "source", "mutants"):
            if key not in f:
                errors.append(f"files[{path}]: missing {key}")
        ids = set()
        for i, m in enumerate(f.get("mutants", [])):
            where = f"files[{path}].mutants[{i}]"
            for key in ("id", "mutatorName", "location", "status"):
                if key not in m:
                    errors.append(f"{where}: missing {key}")
            if m.get("status") not in MTE_STATUSES:
                errors.append(f"{where}: status {m.get('status')!r} not in the schema")
            if m.get("id") in ids:
                errors.append(f"{where}: duplicate id")
            ids.add(m.get("id"))
            loc = m.get("location", {})
            for end in ("start", "end"):
                pos = loc.get(end, {})
                if not all(isinstance(pos.get(k), int) and pos[k] >= 1 for k in ("line", "column")):
                    errors.append(f"{where}: location.{end} needs line and column >= 1")
    return errors


def _pct(a: int, b: int) -> str:
    return "n/a" if b == 0 else f"{100.0 * a / b:.1f}%"


def _table(rows: dict[str, dict[str, Any]], first: str) -> list[str]:
    head = (
        f"| {first} | total | killed | timeout | survived | no coverage | flaky "
        "| equivalent | score |"
    )
    out = [head, "|" + "---|" * 9]
    for name, r in rows.items():
        killed = r["killed"] + r["crashed"]
        sc = "n/a" if r["score"] is None else f"{r['score']}%"
        out.append(
            f"| {name} | {r['total']} | {killed} | {r['timeout']} | {r['survived']} | "
            f"{r['no-coverage']} | {r['flaky']} | {r['equivalent']} | {sc} |"
        )
    return out


def to_markdown(doc: dict[str, Any]) -> str:
    ms = doc["mutants"]
    gate = doc["gate"]
    t = doc.get("timings", {})
    lines = [f"# Mutation audit: {doc['target']} {doc['version']}", ""]
    if doc.get("suite"):
        lines += [f"Suite: ctxaudit `{doc['suite']}`.", ""]
    verdict = (
        "PASSED" if gate["passed"] else f"FAILED ({len(gate['failures'])} gated mutants not killed)"
    )
    lines += [
        f"**Gate: {verdict}.** Every removed-write and wrong-comparison mutant, and every "
        "catalogued mutant, must be killed (a timeout counts as killed)"
        + (", robustly (see Robust kills)" if len(doc.get("seeds", [0])) > 1 else "")
        + "; equivalent mutants "
        "are excused only when listed with a reason in `mutation/equivalent.toml`.",
        "",
    ]
    for err in doc.get("errors", []):
        lines.append(f"- error: {err}")
    n = len(ms)
    secs = t.get("mutation", 0.0)
    lines += [
        f"{n} mutants in {t.get('total', 0.0):.0f} s (baseline {t.get('baseline', 0.0):.1f} s, "
        f"mutants {secs:.0f} s, {n / secs if secs else 0:.1f} mutants/s"
        + (f", {doc['shards']} shards" if doc.get("shards", 1) > 1 else "")
        + ").",
        "",
        (
            f"Only a deterministic {100 * doc['other_sample']:.0f}% sample of the `other` "
            f"mutants ran ({doc['other_not_sampled']} not run)."
            if doc.get("other_not_sampled")
            else "All mutants in scope ran."
        )
        + (
            f" Only the mutants matching {', '.join(doc['only'])} ran (--only)."
            if doc.get("only")
            else ""
        )
        + (
            f" {doc['cache']['reused']} verdicts were reused from the verdict cache "
            "(`.cache/mutation-verdicts/`), "
            f"{doc['cache'].get('ran', 0)} mutants ran."
            if (doc.get("cache") or {}).get("reused")
            else ""
        ),
        "",
        "## Score per kind",
        "",
        *_table(summary(ms, "kind"), "kind"),
        "",
        *_robust_markdown(doc),
        "## Score per file",
        "",
        *_table(summary(ms, "file"), "file"),
        "",
    ]
    cov = doc.get("coverage")
    lines += ["## Branch coverage of the same scope (pytest-cov --cov-branch)", ""]
    if cov and "totals" in cov:
        lines += ["| file | statements | branches |", "|---|---|---|"]
        for path, c in sorted(cov["files"].items()):
            lines.append(
                f"| {path} | {c['covered_statements']}/{c['statements']} "
                f"({_pct(c['covered_statements'], c['statements'])}) | "
                f"{c['covered_branches']}/{c['branches']} "
                f"({_pct(c['covered_branches'], c['branches'])}) |"
            )
        tt = cov["totals"]
        lines.append(
            f"| **all** | {_pct(tt['covered_statements'], tt['statements'])} | "
            f"{_pct(tt['covered_branches'], tt['branches'])} |"
        )
    else:
        lines.append(f"not measured{': ' + cov['error'] if cov and 'error' in cov else ''}")
    lines.append("")
    cat = [m for m in ms if m.get("catalogue")]
    lines += ["## Catalogue (named mutants)", ""]
    if cat:
        lines += ["| id | property | kind | status | killed by |", "|---|---|---|---|---|"]
        for m in sorted(cat, key=lambda m: m["catalogue"]):
            lines.append(
                f"| {m['catalogue']} | {', '.join(m['properties'])} | {m['kind']} | "
                f"{m['status']} | {m.get('killed_by') or ''} |"
            )
    for na in doc.get("not_applicable", []):
        lines.append(
            f"- {na['id']}: not applicable to {doc['version']} (entry is for {na['versions']})"
        )
    lines.append("")
    survivors = [m for m in ms if m["status"] not in DETECTED and m["status"] != "equivalent"]
    survivors.sort(key=lambda m: (not gated(m), m["file"], m["line"], m["id"]))
    lines += [f"## Survivors ({len(survivors)})", ""]
    for m in survivors:
        should = ", ".join(m["properties"]) or "none mapped"
        src = "catalogue" if m.get("catalogue") else "the function's properties"
        head = f"### `{m['id']}`" if gated(m) else f"#### `{m['id']}`"
        lines += [
            head,
            "",
            f"{m['status']} - kind **{m['kind']}** ({m['operator']}), `{m['file']}:{m['line']}` "
            f"in `{m['function']}`. Should have been caught by: **{should}** ({src}).",
        ]
        if m.get("reason"):
            lines.append(f"Reason: {m['reason']}")
        lines += [
            "",
            "```diff",
            m.get("diff", "").rstrip() or f"- {m['original']}\n+ {m['replacement']}",
            "```",
            "",
        ]
    eq = [m for m in ms if m["status"] == "equivalent"]
    if eq:
        lines += [f"## Equivalent mutants ({len(eq)}, reviewed in mutation/equivalent.toml)", ""]
        for m in eq:
            lines.append(f"- `{m['id']}`: {m['original']} -> {m['replacement']}. {m['reason']}")
        lines.append("")
    if doc.get("stale_equivalents"):
        lines += ["## Stale entries in mutation/equivalent.toml", ""]
        lines += [f"- {s}" for s in doc["stale_equivalents"]] + [""]
    if doc.get("excluded"):
        lines += ["## Left out by configuration (mutation/targets.toml)", ""]
        lines += [f"- {n} mutants: {reason}" for reason, n in sorted(doc["excluded"].items())]
        lines.append("")
    if doc.get("findings_excluded") is not None:
        ids = doc["findings_excluded"]
        lines += [
            "## Known findings left out of the mutant runs",
            "",
            (
                f"The suites left out the regions of these known findings (CTXAUDIT_FINDINGS), "
                f"as the audit's property phase did for this version: {ids}."
                if ids not in ("", "none")
                else "None (CTXAUDIT_FINDINGS=none)."
            ),
            "",
        ]
    if doc.get("deselected"):
        lines += ["## Tests not run against mutants (mutation/targets.toml)", ""]
        lines += [f"- `{t}`: {r}" for t, r in doc["deselected"]] + [""]
    base = doc.get("baseline", {})
    if base.get("failing"):
        lines += ["## Tests failing on the unmutated target (left out of the mutant runs)", ""]
        lines += [f"- `{t}`" for t in base["failing"]] + [""]
    lines += _peer_markdown(doc)
    return "\n".join(lines) + "\n"


def _robust_markdown(doc: dict[str, Any]) -> list[str]:
    seeds = doc.get("seeds", [0])
    rows = robustness(doc["mutants"])
    lines = [f"## Robust kills (seeds {', '.join(map(str, seeds))})", ""]
    if len(seeds) < 2:
        return lines + [
            "One seed only: whether a kill depends on the seed was not checked.",
            "",
        ]
    lines += [
        "A detected gated mutant is killed robustly when a test that does not use "
        "Hypothesis' seed kills it, or when it is detected under every seed (pass 1 under "
        f"seed {seeds[0]}, then its killing tests again under "
        f"{', '.join(map(str, seeds[1:]))}; seed 0 is the profile's derandomized examples). "
        "Only robust kills pass the gate.",
        "",
        "| kind | robust | seed-dependent |",
        "|---|---|---|",
    ]
    for kind, r in rows.items():
        lines.append(f"| {kind} | {r['robust']} | {r['seed-dependent']} |")
    dependent = [m for m in doc["mutants"] if m.get("robust") == "seed-dependent"]
    if dependent:
        lines += ["", f"Seed-dependent kills ({len(dependent)}):", ""]
        for m in sorted(dependent, key=lambda m: m["id"]):
            lines.append(
                f"- `{m['id']}` ({m['kind']}): {m['original']} -> {m['replacement']}; "
                f"{m.get('robust_reason', '')}. Replay: `python -m mutation run --target "
                f"{doc['target']} --only '{m['id']}' --seed {seeds[0]} --seeds {len(seeds)}`"
            )
    return lines + [""]


def _peer_markdown(doc: dict[str, Any]) -> list[str]:
    ps = peer_summary(doc)
    if ps is None:
        return []
    peer = doc["peer"]
    lines = [f"## Peer comparison: the same mutants against {ps['name']}", ""]
    if "by_kind" not in ps:
        return lines + [f"Not run: {ps['error']}", ""]
    if ps.get("error"):
        lines += [f"- error: {ps['error']}", ""]
    base = peer.get("baseline", {})
    lines += [
        f"From `{shown_path(peer['root'])}`: {len(peer['tests'])} test files "
        f"({peer['selection_reason']}). "
        f"{ps['baseline_tests']} tests collected; {ps['baseline_failing']} fail or error on the "
        "unmutated tree and are left out of the mutant runs, as for our suite. The sdist ships "
        "no `tests/conftest.py`, so tests that need its fixtures error.",
        "",
        "| kind | mutants | ctxaudit | score | gitreins' tests | score |",
        "|---|---|---|---|---|---|",
    ]
    for kind, r in [*ps["by_kind"].items(), ("**all**", ps["total"])]:
        lines.append(
            f"| {kind} | {r['mutants']} | {r['ours']} | {_pct(r['ours'], r['mutants'])} | "
            f"{r['peer']} | {_pct(r['peer'], r['mutants'])} |"
        )
    t, pt = doc.get("timings", {}), ps["timings"]
    lines += [
        "",
        "| suite | baseline run | mutant runs | mutants/s |",
        "|---|---|---|---|",
        f"| ctxaudit | {t.get('baseline', 0.0):.1f} s | {t.get('mutation', 0.0):.0f} s | "
        f"{_rate(len(peer['results']), t.get('mutation', 0.0))} |",
        f"| gitreins' tests | {pt.get('baseline', 0.0):.1f} s | {pt.get('mutation', 0.0):.0f} s | "
        f"{_rate(len(peer['results']), pt.get('mutation', 0.0))} |",
        "",
        f"Killed by ctxaudit and not by gitreins' tests: {ps['killed_only_by_ours']}. "
        f"Killed by gitreins' tests and not by ctxaudit: {len(ps['killed_only_by_peer'])}"
        + ("." if not ps["killed_only_by_peer"] else ":"),
        "",
    ]
    by_id = {m["id"]: m for m in doc["mutants"]}
    for mid in ps["killed_only_by_peer"]:
        m = by_id[mid]
        lines.append(
            f"- `{mid}` ({m['kind']}): {m['original']} -> {m['replacement']}; "
            f"killed by `{peer['results'][mid][1]}`"
        )
    if base.get("failing"):
        lines += [
            "",
            f"<details><summary>{len(base['failing'])} peer tests left out (fail or error "
            "unmutated)</summary>",
            "",
            *[f"- `{x}`" for x in base["failing"]],
            "",
            "</details>",
        ]
    return lines + [""]


def _rate(n: int, seconds: float) -> str:
    return f"{n / seconds:.1f}" if seconds > 0 else "-"


def write_reports(doc: dict[str, Any], out_dir: Path) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    mte = to_mte(doc)
    errors = validate_mte(mte)
    if errors:
        raise ValueError("mutation.json does not fit the schema: " + "; ".join(errors[:5]))
    js = out_dir / "mutation.json"
    md = out_dir / "mutation.md"
    js.write_text(json.dumps(mte, indent=1) + "\n")
    md.write_text(to_markdown(doc))
    return js, md


def kinds_counts(doc: dict[str, Any]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {k: dict.fromkeys(STATUSES, 0) for k in KINDS}
    for m in doc["mutants"]:
        out.setdefault(m["kind"], dict.fromkeys(STATUSES, 0))
        out[m["kind"]][m["status"]] = out[m["kind"]].get(m["status"], 0) + 1
    return out
