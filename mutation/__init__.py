"""Mutation audit of the ctxaudit targets (issue 4). See mutation/README.md.

Python API (what ``ctxaudit audit`` calls)::

    from mutation import run, merge
    result = run("gitreins", "0.17.1", Path("reports/gitreins-0.17.1"))
    result.gate_passed, result.counts, result.elapsed, result.mutants_per_second

    # on N machines, then once:
    run("ledger", "", out, shard=(1, 3)) ... run("ledger", "", out, shard=(3, 3))
    merge([out]) -> MutationResult (writes mutation.json / mutation.md, decides the gate)
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mutation import engine, report
from mutation.config import ConfigError, target_config
from mutation.engine import REPO, SHARD_FORMAT, MutationError

__all__ = ["MutationError", "MutationResult", "merge", "resolve_target", "run"]


@dataclass
class MutationResult:
    target: str
    version: str
    gate_passed: bool
    gate_failures: list[str]
    counts: dict[str, dict[str, int]]
    scores: dict[str, float | None]
    total: int
    elapsed: float
    mutants_per_second: float
    shard: tuple[int, int] | None = None
    report_json: Path | None = None
    report_md: Path | None = None
    shard_file: Path | None = None
    errors: list[str] = field(default_factory=list)

    def summary_line(self) -> str:
        parts = [
            f"{k} {sum(v[s] for s in report.DETECTED)}/{sum(v.values())}"
            for k, v in self.counts.items()
            if sum(v.values())
        ]
        gate = "passed" if self.gate_passed else f"FAILED ({len(self.gate_failures)} not killed)"
        where = f" shard {self.shard[0]}/{self.shard[1]}" if self.shard else ""
        return (
            f"mutation {self.target} {self.version}{where}: {self.total} mutants, "
            + ", ".join(parts)
            + f" killed; {self.elapsed:.0f} s ({self.mutants_per_second:.1f}/s); gate {gate}"
        )


def resolve_target(target: str, tree_or_spec: str | None) -> tuple[Path, str, str]:
    """(root that holds the package, version, folder to copy) for a target spec."""
    if target == "ledger":
        root = Path(tree_or_spec).resolve() if tree_or_spec else REPO
        init = root / "ledger" / "__init__.py"
        if not init.is_file():
            raise MutationError(f"ledger: no ledger/ package under {root}")
        m = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", init.read_text(), re.M)
        version = m.group(1) if m else _project_version()
        return root, version, "ledger"
    if target == "gitreins":
        from ctxaudit.targets.gitreins import TargetError, resolve

        try:
            tree = resolve(tree_or_spec or "")
        except TargetError as exc:
            raise MutationError(str(exc)) from None
        return tree.root, tree.version, "engine"
    raise MutationError(f"unknown target {target!r}; choose ledger or gitreins")


def _project_version() -> str:
    import tomllib

    return str(tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"])


def run(
    target: str,
    tree_or_spec: str | None,
    out_dir: Path,
    shard: tuple[int, int] | None = None,
    progress: Callable[[dict[str, Any]], None] | None = None,
    *,
    jobs: int = 2,
    recheck: str = "gated",
    coverage: bool = True,
    other_sample: float = 1.0,
) -> MutationResult:
    """Mutate ``target``, run its suite against every mutant, write reports into ``out_dir``.

    With ``shard=(i, n)`` only the i-th of n deterministic shards runs and
    ``out_dir/mutation-shard-i-of-n.json`` is written; :func:`merge` makes the report.
    ``other_sample`` < 1 runs only that fraction of the ``other`` mutants (chosen by a
    hash of their id, so the same ones every time); removed-write, wrong-comparison and
    catalogued mutants always all run.
    """
    if not 0.0 < other_sample <= 1.0:
        raise MutationError(f"bad other_sample {other_sample}: need 0 < f <= 1")
    if shard is not None:
        i, n = shard
        if not (n >= 1 and 1 <= i <= n):
            raise MutationError(f"bad shard {i}/{n}: need 1 <= I <= N")
    if recheck not in ("gated", "survivors", "all", "none"):
        raise MutationError(f"bad recheck {recheck!r}: gated, survivors, all or none")
    t0 = time.monotonic()
    try:
        cfg = target_config(target)
    except ConfigError as exc:
        raise MutationError(str(exc)) from None
    root, version, copy_dir = resolve_target(target, tree_or_spec)
    plan = engine.build_plan(target, cfg, root, version)
    i, n = shard or (1, 1)
    planned = [m for m in plan.mutants if engine.sampled(m, other_sample)]
    unsampled = len(plan.mutants) - len(planned)
    selected = [m for m in planned if engine.shard_of(m.id, n) == i - 1]
    work = engine.WORK / f"{target}-{version}-{i}of{n}"
    modules = engine.write_work_tree(plan, {m.id for m in selected}, work, copy_dir)
    setup = time.monotonic() - t0
    if progress:
        progress(
            {
                "event": "plan",
                "target": target,
                "version": version,
                "mutants": len(selected),
                "all": len(plan.mutants),
            }
        )
    tests_arg = str(work / "tree")
    baseline: dict[str, Any] = {}
    if selected:
        baseline = engine.run_worker(
            plan, cfg, selected, work, tests_arg, jobs, recheck, progress, modules
        )
    cov = None
    if coverage and i == 1:
        cov = engine.branch_coverage(plan, cfg, str(root), work)
    chosen = {m.id for m in selected}
    for fp in plan.files.values():
        for m, mu in fp.mutations:
            if m.id in chosen and m.status not in report.DETECTED:
                m.diff = engine.mutant_diff(fp, mu)
    elapsed = time.monotonic() - t0
    doc = {
        "format": SHARD_FORMAT,
        "target": target,
        "version": version,
        "root": str(root),
        "shard": [i, n],
        "total_mutants": len(planned),
        "other_sample": other_sample,
        "other_not_sampled": unsampled,
        "plan_digest": plan.digest,
        "sources": {p: fp.source for p, fp in plan.files.items()},
        "mutants": [engine.mutant_to_json(m) for m in selected],
        "baseline": baseline,
        "coverage": cov,
        "not_applicable": plan.not_applicable,
        "excluded": plan.excluded,
        "deselected": [list(d) for d in cfg.deselect],
        "timings": {
            "setup": setup,
            "baseline": baseline.get("seconds", 0.0),
            "mutation": baseline.get("mutation_seconds", 0.0) - baseline.get("seconds", 0.0),
            "total": elapsed,
        },
    }
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if shard is not None:
        path = out_dir / f"mutation-shard-{i}-of-{n}.json"
        path.write_text(json.dumps(doc) + "\n")
        res = _result(_finish(doc, [doc]), None, None)
        res.shard = (i, n)
        res.shard_file = path
        return res
    final = _finish(doc, [doc])
    js, md = report.write_reports(final, out_dir)
    return _result(final, js, md)


def _finish(first: dict[str, Any], docs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    mutants = [m for d in docs for m in d["mutants"]]
    timings = {
        k: sum(d["timings"].get(k, 0.0) for d in docs) for k in ("setup", "baseline", "mutation")
    }
    timings["total"] = max(d["timings"].get("total", 0.0) for d in docs)
    timings["cpu_total"] = sum(d["timings"].get("total", 0.0) for d in docs)
    cov = next((d["coverage"] for d in docs if d.get("coverage")), None)
    failing = sorted({t for d in docs for t in d.get("baseline", {}).get("failing", [])})
    final = {
        **{
            k: first[k]
            for k in ("target", "version", "root", "sources", "not_applicable", "excluded")
        },
        "mutants": mutants,
        "coverage": cov,
        "timings": timings,
        "baseline": {"failing": failing},
        "shards": len(docs),
    }
    equivalents = engine.load_equivalents(target=first["target"])
    return report.apply_gate(final, equivalents)


def _result(doc: dict[str, Any], js: Path | None, md: Path | None) -> MutationResult:
    counts = report.kinds_counts(doc)
    scores = {k: v["score"] for k, v in report.summary(doc["mutants"], "kind").items()}
    total = len(doc["mutants"])
    elapsed = doc["timings"]["total"]
    mut = doc["timings"].get("mutation", 0.0)
    return MutationResult(
        target=doc["target"],
        version=doc["version"],
        gate_passed=doc["gate"]["passed"],
        gate_failures=list(doc["gate"]["failures"]),
        counts=counts,
        scores=scores,
        total=total,
        elapsed=elapsed,
        mutants_per_second=(total / mut) if mut > 0 else 0.0,
        report_json=js,
        report_md=md,
    )


def merge(paths: Sequence[Path], out_dir: Path | None = None) -> MutationResult:
    """Combine shard files (or folders holding them) into one report and one gate."""
    files: list[Path] = []
    for p in map(Path, paths):
        files += sorted(p.glob("mutation-shard-*-of-*.json")) if p.is_dir() else [p]
    if not files:
        raise MutationError("merge: no shard files (mutation-shard-I-of-N.json) found")
    docs = []
    for f in files:
        try:
            d = json.loads(f.read_text())
        except (OSError, ValueError) as exc:
            raise MutationError(f"merge: cannot read {f}: {exc}") from None
        if d.get("format") != SHARD_FORMAT:
            raise MutationError(f"merge: {f} is not a shard result")
        docs.append(d)
    first = docs[0]
    n = first["shard"][1]
    for d in docs:
        same = (d["target"], d["version"], d["shard"][1], d["plan_digest"])
        if same != (first["target"], first["version"], n, first["plan_digest"]):
            raise MutationError(
                "merge: shards come from different runs (target, version, N or mutants differ)"
            )
    got = sorted(d["shard"][0] for d in docs)
    if got != list(range(1, n + 1)):
        raise MutationError(f"merge: need shards 1..{n} exactly once, got {got}")
    ids = [m["id"] for d in docs for m in d["mutants"]]
    if len(ids) != len(set(ids)) or len(ids) != first["total_mutants"]:
        raise MutationError(
            f"merge: the shards hold {len(ids)} mutants, the plan has {first['total_mutants']}"
        )
    final = _finish(first, docs)
    out = Path(out_dir) if out_dir else files[0].parent
    js, md = report.write_reports(final, out)
    return _result(final, js, md)


def result_as_dict(res: MutationResult) -> dict[str, Any]:
    d = asdict(res)
    for k in ("report_json", "report_md", "shard_file"):
        d[k] = str(d[k]) if d[k] else None
    return d
