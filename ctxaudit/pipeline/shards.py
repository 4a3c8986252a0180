"""``audit --shard i/N``: one of N parts of an audit, for a CI matrix (issue #39), and
the manifest each part writes beside its reports, which ``ctxaudit merge`` reads.

The parts split the audit's target versions' property phases (each version whole: its
properties and its fix audit), and every version's mutants (each part runs the same
share of each: ``mutation run --shard i/N``, a partition by the mutants' ids), so that
the parts take about equal time whatever the versions' sizes. Every shard resolves the
whole plan (every version the ``--target`` specs name, in the order given, each once),
then takes its versions:

- by the time each version's property phase took in the audits recorded under
  ``reports/timing/``, the longest first, each to the part with the least time so far
  (ties: the lower part);
- a version with no recorded time counts as the mean of those recorded (1 s when none
  is), so that with no record at all the split is by the plan's order alone.

The same plan and the same records give the same split on every machine. A part may be
empty (more parts than versions): it writes its manifest and no report.

The manifest (:data:`MANIFEST`, in ``--out``) names the plan, the part and what must be
the same in every part of one audit (the suite's digest, the profile, the seed, the
options that change a verdict); it says whether the part finished, with its exit code,
each version's report (the step cache's form) and the exit code of its share of each
version's mutants (``mutation-shard-i-of-N.json`` in the version's folder). It is
written when the part starts (``finished: false``) and again when it ends, so a part
that crashed or was stopped reads as unfinished, never as missing work that passed.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxaudit import atomic
from ctxaudit.paths import REPO_ROOT

if TYPE_CHECKING:
    from ctxaudit.pipeline.options import AuditOptions
    from ctxaudit.target_report import TargetReport
    from ctxaudit.targets.base import Described

MANIFEST = "shard.json"
#: where recorded audit times are read (``audit-time.json`` files and their copies)
TIMING = REPO_ROOT / "reports" / "timing"
SCHEMA = 1


@dataclasses.dataclass(frozen=True)
class Shard:
    """Part ``index`` of ``count`` (1-based)."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """``i/N`` as a :class:`Shard`; raises ValueError with the reason."""
    head, sep, tail = text.partition("/")
    if not (sep and head.isdigit() and tail.isdigit()):
        raise ValueError(f"{text!r} is not i/N (e.g. 2/4)")
    index, count = int(head), int(tail)
    if not 1 <= index <= count:
        raise ValueError(f"{text!r}: i must be from 1 to N")
    return Shard(index, count)


def recorded_seconds(mutation: bool, folder: Path = TIMING) -> dict[str, float]:
    """Each target version's recorded time (label -> seconds): its property phase, plus
    its mutation run when ``mutation``, from the newest record that has it."""
    found: dict[str, tuple[str, float]] = {}
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            started = str(doc.get("started", ""))
            versions = dict(doc["targets"])
        except (OSError, ValueError, KeyError, TypeError):
            continue  # not an audit's time record
        for label, t in versions.items():
            try:
                seconds = float(t.get("properties_s") or 0.0)
                if mutation:
                    seconds += float(t.get("mutation_s") or 0.0)
            except (AttributeError, TypeError, ValueError):
                continue
            if seconds > 0 and started >= found.get(label, ("", 0.0))[0]:
                found[label] = (started, seconds)
    return {label: seconds for label, (_, seconds) in found.items()}


def split(labels: Sequence[str], count: int, seconds: Mapping[str, float]) -> list[list[str]]:
    """``labels`` in ``count`` parts of about equal time: the longest first, each to the
    part with the least time so far (ties: the lower part); a label with no time counts
    as the mean of the others (1 s when none has one). Each part keeps the plan's order."""
    known = [seconds[label] for label in labels if label in seconds]
    default = statistics.fmean(known) if known else 1.0
    cost = {label: seconds.get(label, default) for label in labels}
    order = sorted(range(len(labels)), key=lambda i: (-cost[labels[i]], i))
    load = [0.0] * count
    parts: list[list[int]] = [[] for _ in range(count)]
    for i in order:
        k = min(range(count), key=lambda k: (load[k], k))
        parts[k].append(i)
        load[k] += cost[labels[i]]
    return [[labels[i] for i in sorted(part)] for part in parts]


def identity(options: AuditOptions, seed: int) -> dict[str, Any]:
    """What every part of one audit must share: the suite that ran, the plan, the
    profile and seeds, and the options that change a verdict."""
    from ctxaudit.digest import suite_digest

    return {
        "suite": suite_digest(),
        "plan": [plan_entry(t) for t in options.plan],
        "profile": options.profile,
        "seed": seed,
        "seeds": options.seeds[1:],
        "mutation": options.mutation,
        "other_sample": options.other_sample,
        "peer": options.peer,
        "mutate": options.mutate,
        "fixes": options.fixes,
        "own_tests": options.own_tests,
        "since": options.since,
    }


def plan_entry(t: Described) -> dict[str, Any]:
    return {"kind": t.kind, "spec": t.spec, "version": t.version,
            "repo": str(t.repo) if t.repo is not None else None}  # fmt: skip


def write_manifest(
    out: Path,
    shard: Shard,
    ident: Mapping[str, Any],
    took: Sequence[str],
    finished: bool = False,
    exit_code: int | None = None,
    reports: Sequence[TargetReport] = (),
    gates: Mapping[str, tuple[int, str]] | None = None,
    mutation_shares: Mapping[str, int] | None = None,
) -> Path:
    """The part's manifest in ``out`` (written whole)."""
    from ctxaudit.result_json import report_to_json

    doc = {
        "schema": SCHEMA,
        "shard": [shard.index, shard.count],
        "identity": dict(ident),
        "took": list(took),
        "finished": finished,
        "exit": exit_code,
        "reports": [report_to_json(r) for r in reports],
        "gates": {label: list(gate) for label, gate in (gates or {}).items()},
        "mutation_shares": dict(mutation_shares or {}),
    }
    return atomic.write_text(out / MANIFEST, json.dumps(doc, indent=1) + "\n")
