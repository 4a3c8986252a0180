"""``merge``: the shards of one plan combined into one report and one gate.

A run's own report goes through :func:`finish` too, as the one shard of its plan. (The
module is not named ``merge``: importing a submodule ``mutation.merge`` would put it in
the place of the public function ``mutation.merge``.)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mutation import report
from mutation.engine import SHARD_FORMAT, MutationError
from mutation.peer import merge_peer
from mutation.result import MutationResult, result_from
from mutation.reviewed import load_equivalents

#: the fields that are the same in every shard of one plan, taken from the first
_SAME_IN_EVERY_SHARD = (
    "other_sample",
    "other_not_sampled",
    "only",
    "tests",
    "deselected",
    "findings_excluded",
    "seeds",
    "fixes",
    "no_longer_applies",
    "rerun",
)


def merge(paths: Sequence[Path], out_dir: Path | None = None) -> MutationResult:
    """Combine shard files (or folders holding them) into one report and one gate."""
    files, docs = _read_shards(paths)
    _check_complete(docs)
    final = finish(docs[0], docs)
    out = Path(out_dir) if out_dir else files[0].parent
    js, md = report.write_reports(final, out)
    return result_from(final, js, md)


def _read_shards(paths: Sequence[Path]) -> tuple[list[Path], list[dict[str, Any]]]:
    """The shard files named or held by the folders named, and their documents."""
    files: list[Path] = []
    for p in map(Path, paths):
        files += sorted(p.glob("mutation-shard-*-of-*.json")) if p.is_dir() else [p]
    if not files:
        raise MutationError("merge: no shard files (mutation-shard-I-of-N.json) found")
    docs = []
    for f in files:
        try:
            d = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise MutationError(f"merge: cannot read {f}: {exc}") from None
        if d.get("format") != SHARD_FORMAT:
            raise MutationError(f"merge: {f} is not a shard result")
        docs.append(d)
    return files, docs


def _check_complete(docs: Sequence[dict[str, Any]]) -> None:
    """The documents are shards 1..N of the same plan, each once, holding its mutants."""
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


def finish(first: dict[str, Any], docs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The final report document of a plan's shard documents (``first`` among them):
    their mutants, summed times, the first coverage, the peers merged, and the gate."""
    mutants = [m for d in docs for m in d["mutants"]]
    timings = {
        k: sum(d["timings"].get(k, 0.0) for d in docs) for k in ("setup", "baseline", "mutation")
    }
    timings["total"] = max(d["timings"].get("total", 0.0) for d in docs)
    timings["cpu_total"] = sum(d["timings"].get("total", 0.0) for d in docs)
    cov = next((d["coverage"] for d in docs if d.get("coverage")), None)
    peers = [d["peer"] for d in docs if d.get("peer")]
    failing = sorted({t for d in docs for t in d.get("baseline", {}).get("failing", [])})
    final = {
        **{
            k: first[k]
            for k in ("target", "version", "root", "sources", "not_applicable", "excluded")
        },
        **{k: first.get(k) for k in _SAME_IN_EVERY_SHARD if first.get(k) is not None},
        "mutants": mutants,
        "coverage": cov,
        "timings": timings,
        "baseline": {"failing": failing},
        "shards": len(docs),
        "peer": merge_peer(peers) if peers else None,
        "cache": {
            "reused": sum((d.get("cache") or {}).get("reused", 0) for d in docs),
            "ran": sum((d.get("cache") or {}).get("ran", len(d["mutants"])) for d in docs),
        },
    }
    equivalents = load_equivalents(target=first["target"])
    return report.apply_gate(final, equivalents)
