"""Gate, scores and reports: ``mutation.json`` (mutation-testing-elements), ``mutation.md``."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import sys
import tempfile
from collections import Counter
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from jinja2 import Template

from ctxaudit import atomic
from ctxaudit import mte as mte_view
from ctxaudit.replay import printed
from ctxaudit.templating import environment
from mutation import peer_spec
from mutation.operators import GATED_KINDS, KINDS

DETECTED = ("killed", "timeout", "crashed")
#: a mutant whose runs died by a signal not ctxaudit's (mutation/worker.py): no verdict,
#: neither detected nor survived; a gated one in error keeps the gate from passing
ERROR = "error"
STATUSES = (
    "killed", "timeout", "crashed", "survived", "no-coverage", "flaky", "equivalent", ERROR,
)  # fmt: skip
STRYKER_STATUS = {
    "killed": "Killed",
    "crashed": "Killed",
    ERROR: "RuntimeError",
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
    """A path as a report shows it, so a committed report carries no machine path:
    relative to the repository when inside it; else from the place it is under, named:
    ``<venv>`` (this interpreter's environment), ``$CTXAUDIT_CACHE`` (the cache, when
    set outside the repository), ``<tmp>`` (the temporary folder), ``~`` (the home
    folder); else as it is."""
    if not path:
        return path
    repo = Path(__file__).resolve().parents[1]
    p = Path(path).resolve()
    if p.is_relative_to(repo):
        return p.relative_to(repo).as_posix() or "."
    places = [
        ("<venv>", sys.prefix),
        ("$CTXAUDIT_CACHE", os.environ.get("CTXAUDIT_CACHE", "")),
        ("<tmp>", tempfile.gettempdir()),
        ("~", str(Path.home())),
    ]
    for name, place in places:
        if place and p.is_relative_to(Path(place).resolve()):
            rest = p.relative_to(Path(place).resolve()).as_posix()
            return name if rest == "." else f"{name}/{rest}"
    return path


def gated(m: dict[str, Any]) -> bool:
    return m["kind"] in GATED_KINDS or m.get("catalogue") is not None


def _in_error(m: dict[str, Any]) -> str | None:
    """Why a mutant has no verdict: a pass of it (the first, the recheck, a seed's) ended
    in error; None when every pass came to a verdict."""
    if m["status"] == ERROR:
        return m.get("reason") or "its runs died"
    if m.get("second_status") == ERROR:
        return "the recheck's runs died"
    for check in m.get("seed_checks") or []:
        if check.get("status") == ERROR:
            return f"its runs under seed {check.get('seed')} died"
    return None


def apply_gate(doc: dict[str, Any], equivalents: dict[str, str]) -> dict[str, Any]:
    """Mark listed equivalents and mutants in error, and decide the gate. Mutates and
    returns ``doc``."""
    ids = {m["id"] for m in doc["mutants"]}
    failures: list[str] = []
    stale: list[str] = []
    in_error: list[str] = []
    for m in doc["mutants"]:
        why = _in_error(m)
        if why is not None:
            # no verdict: never counted as killed, nor excused as equivalent
            m["status"], m["reason"], m["robust"] = ERROR, why, None
            if gated(m):
                failures.append(m["id"])
                in_error.append(m["id"])
            continue
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
    by_id = {m["id"]: m for m in doc["mutants"]}
    errors = list(doc.get("errors") or [])
    errors += [
        f"gated mutant {i} is in error ({by_id[i]['reason']}): it has no verdict, and the "
        "gate cannot pass while a gated mutant is in error; run it again"
        for i in in_error
        if not any(e.startswith(f"gated mutant {i} ") for e in errors)
    ]
    if errors:
        doc["errors"] = errors
    doc["gate"] = {
        "passed": not failures and not errors,
        "failures": failures,
        "in_error": in_error,
        "seeds": doc.get("seeds", [0]),
        "robust_only": len(doc.get("seeds", [0])) > 1,
    }
    doc["stale_equivalents"] = stale
    return doc


ROBUSTNESS = ("robust", "seed-dependent", "unchecked", "robust_by_seed_free_test")


def robustness(mutants: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per kind, the detected gated mutants whose kill is robust (a seed-free test, or
    every seed), seed-dependent, or unchecked (one seed only)."""
    out: dict[str, dict[str, int]] = {}
    for m in mutants:
        if not gated(m) or m["status"] not in DETECTED:
            continue
        row = out.setdefault(m["kind"], dict.fromkeys(ROBUSTNESS, 0))
        row[m.get("robust") or "unchecked"] += 1
        row["robust_by_seed_free_test"] += m.get("robust_by") == "seed-free test"
    return dict(sorted(out.items()))


def score(counts: Counter[str]) -> float | None:
    valid = sum(counts[s] for s in STATUSES if s not in ("equivalent", ERROR))
    return None if valid == 0 else round(100.0 * sum(counts[s] for s in DETECTED) / valid, 1)


def summary(mutants: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    groups: dict[str, Counter[str]] = {}
    for m in mutants:
        groups.setdefault(m[key], Counter())[m["status"]] += 1
    return {
        g: {"total": sum(c.values()), **{s: c[s] for s in STATUSES}, "score": score(c)}
        for g, c in sorted(groups.items())
    }


def peer_summary(
    doc: dict[str, Any], outside: dict[str, str] | None = None
) -> dict[str, Any] | None:
    """Our suite and the peer suite on the same mutants, per kind (None if no peer ran).

    Mutants excused as equivalent for our suite are left out of both denominators; a
    mutant the peer suite never reached counts as not detected, as for ours. The kills
    only the peer makes are split: against a SPEC property (unlisted), and outside the
    SPEC (listed in ``outside`` with the reason; default: ``mutation/outside_spec.toml``
    for the document's target, mutation/peer_spec.py).
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
    if outside is None:
        outside = peer_spec.load_outside_spec(peer_spec.OUTSIDE_SPEC_FILE, doc.get("target"))
    against, beyond = peer_spec.split(theirs_only, outside)
    return {
        "name": peer["name"],
        "by_kind": dict(sorted(kinds.items())),
        "total": total,
        "killed_only_by_ours": len(ours_only),
        "killed_only_by_peer": theirs_only,
        # of those: against a SPEC property (must be none), and outside the SPEC (id -> reason)
        "peer_only_against_spec": against,
        "peer_only_outside_spec": beyond,
        "timings": peer.get("timings", {}),
        "baseline_tests": peer.get("baseline", {}).get("tests", 0),
        "baseline_failing": len(peer.get("baseline", {}).get("failing", [])),
        # why peer tests cannot run on the unmutated tree: counts per outcome (error,
        # failed, skipped) and the tests grouped by reason (mutation/peer_outcomes.py)
        "not_run": peer.get("baseline", {}).get("not_run"),
        # fixtures ctxaudit supplies to the peer suite (a target's pytest plugin given in
        # its mutation.toml's peer pytest_args)
        "plugins": peer.get("plugins", []),
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
            # the fixes applied to the mutated tree (--fix; empty: the released tree)
            "fixes": doc.get("fixes") or [],
            # named mutants whose code is gone from a developer's tree: information, not run
            "catalogue_no_longer_applies": doc.get("no_longer_applies") or [],
            # named mutants not for this tree (`versions`, `where`), each with why
            "catalogue_not_applicable": doc.get("not_applicable") or [],
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


def _rate(n: int, seconds: float) -> str:
    return f"{n / seconds:.1f}" if seconds > 0 else "-"


def rerun(doc: dict[str, Any], mutant_id: str) -> str:
    """The command that runs one mutant of this report again, alone."""
    args = ["python", "-m", "mutation", "run", *(doc.get("rerun") or ["--target", doc["target"]])]
    seed = (doc.get("seeds") or [0])[0]
    if seed:
        args += ["--seed", str(seed)]
    return printed(shlex.join([*args, "--only", mutant_id]))  # as this ctxaudit runs it


def to_markdown(doc: dict[str, Any]) -> str:
    """mutation.md (template ``mutation/templates/mutation.md.j2``)."""
    ms = doc["mutants"]
    survivors = [m for m in ms if m["status"] not in (*DETECTED, "equivalent", ERROR)]
    survivors.sort(key=lambda m: (not gated(m), m["file"], m["line"], m["id"]))
    cov = doc.get("coverage") or {}
    return _template().render(
        doc=doc,
        by_kind=summary(ms, "kind"),
        by_file=summary(ms, "file"),
        robust=robustness(ms),
        dependent=sorted(
            (m for m in ms if m.get("robust") == "seed-dependent"), key=lambda m: m["id"]
        ),
        coverage_files=sorted((cov.get("files") or {}).items()),
        catalogue=sorted((m for m in ms if m.get("catalogue")), key=lambda m: m["catalogue"]),
        survivors=survivors,
        no_verdict=sorted((m for m in ms if m["status"] == ERROR), key=lambda m: m["id"]),
        equivalents=[m for m in ms if m["status"] == "equivalent"],
        peer=peer_summary(doc),
        by_id={m["id"]: m for m in ms},
        gated=gated,
        rerun=lambda mutant_id: rerun(doc, mutant_id),
        ratio=_pct,
        rate=_rate,
        shown_path=shown_path,
        printed=printed,
    )


@cache
def _template() -> Template:
    return environment("mutation").get_template("mutation.md.j2")


def write_reports(doc: dict[str, Any], out_dir: Path) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    mte = to_mte(doc)
    errors = validate_mte(mte)
    if errors:
        raise ValueError("mutation.json does not fit the schema: " + "; ".join(errors[:5]))
    js = out_dir / "mutation.json"
    md = out_dir / "mutation.md"
    # each appears whole or not at all: a reader (the matrix) never sees half a report
    atomic.write_text(js, json.dumps(mte, indent=1) + "\n")
    atomic.write_text(md, to_markdown(doc))
    # the same report in the mutation-testing-elements viewer, where set-up fetched it
    mte_view.write_html(js, f"{doc.get('target', '')} {doc.get('version', '')} mutants")
    return js, md


def kinds_counts(doc: dict[str, Any]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {k: dict.fromkeys(STATUSES, 0) for k in KINDS}
    for m in doc["mutants"]:
        out.setdefault(m["kind"], dict.fromkeys(STATUSES, 0))
        out[m["kind"]][m["status"]] = out[m["kind"]].get(m["status"], 0) + 1
    return out
