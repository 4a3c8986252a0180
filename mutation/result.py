"""What :func:`mutation.run` and :func:`mutation.merge` return: the gate, the counts and
the times of a run, read from its final report document."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mutation import report


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
    #: the Hypothesis seeds of the run (pass 1 under the first; 0 = derandomized)
    seeds: list[int] = field(default_factory=lambda: [0])
    #: per kind: detected gated mutants killed robustly / seed-dependently
    robustness: dict[str, dict[str, int]] = field(default_factory=dict)
    #: verdicts reused from the cache / run
    reused: int = 0
    #: gated mutants with no verdict (ctxaudit's own error in their runs)
    in_error: list[str] = field(default_factory=list)

    @property
    def unchecked(self) -> bool:
        """The gate did not pass, and only for want of verdicts: every gated failure is
        a mutant in error, or the run reported an error of its own. Neither holds nor
        fails: ctxaudit could not check it."""
        real = [f for f in self.gate_failures if f not in self.in_error]
        return not self.gate_passed and not real

    def _rate(self) -> str:
        """Mutants a second, or seconds a mutant where a mutant takes longer than 1 s;
        no rate where no mutant ran (every verdict reused)."""
        rate = self.mutants_per_second
        if rate <= 0:
            return "no mutant ran"
        return f"{rate:.1f}/s" if rate >= 1 else f"{1 / rate:.1f} s a mutant"

    def summary_line(self) -> str:
        parts = [
            f"{k} {sum(v[s] for s in report.DETECTED)}/{sum(v.values())}"
            for k, v in self.counts.items()
            if sum(v.values())
        ]
        errs = f"; {len(self.errors)} in error, no verdict" if self.errors else ""
        gate = (
            "passed" if self.gate_passed else f"FAILED ({len(self.gate_failures)} not killed{errs})"
        )
        where = f" shard {self.shard[0]}/{self.shard[1]}" if self.shard else ""
        robust = sum(r["robust"] for r in self.robustness.values())
        dependent = sum(r["seed-dependent"] for r in self.robustness.values())
        seeds = (
            f"; seeds {','.join(map(str, self.seeds))}: {robust} robust, "
            f"{dependent} seed-dependent kills"
            if len(self.seeds) > 1
            else f"; seed {self.seeds[0]}"
        )
        return (
            f"mutation {self.target} {self.version}{where}: {self.total} mutants, "
            + ", ".join(parts)
            + f" killed{seeds}; {self.reused} verdicts reused; "
            + f"{self.elapsed:.0f} s ({self._rate()}); gate {gate}"
        )


def result_from(doc: dict[str, Any], js: Path | None, md: Path | None) -> MutationResult:
    """The result of a final report document (gate applied), with the reports written
    from it (None: not written)."""
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
        in_error=list(doc["gate"].get("in_error") or []),
        counts=counts,
        scores=scores,
        total=total,
        elapsed=elapsed,
        mutants_per_second=(total / mut) if mut > 0 else 0.0,
        report_json=js,
        report_md=md,
        seeds=list(doc.get("seeds", [0])),
        robustness=report.robustness(doc["mutants"]),
        reused=int((doc.get("cache") or {}).get("reused", 0)),
        errors=list(doc.get("errors") or []),
    )


def result_as_dict(res: MutationResult) -> dict[str, Any]:
    d = asdict(res)
    for k in ("report_json", "report_md", "shard_file"):
        d[k] = str(d[k]) if d[k] else None
    return d
