"""Where the time of one ``ctxaudit audit`` run went: ``<out>/audit-time.md`` and ``.json``.

The audit records the wall time of its two phases (the property suites, several
target versions at once; then mutation, one version at a time on every core) and,
per target version, the properties' time and the mutation run's time, mutants and
mutants per second (read from its ``mutation.json``). Measured in the run itself, on
whatever machine ran it; compare figures of one run with each other, not across runs.
"""

from __future__ import annotations

import json
import os
import platform
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class TargetTime:
    label: str
    properties_s: float = 0.0
    mutation_s: float | None = None
    mutants: int | None = None
    mutant_runs_s: float | None = None  # the mutants themselves (no baseline, coverage, peer)
    peer_s: float | None = None

    @property
    def mutants_per_s(self) -> float | None:
        if self.mutants is None or not self.mutant_runs_s:
            return None
        return self.mutants / self.mutant_runs_s


@dataclass
class AuditTime:
    command: str
    profile: str
    jobs: int
    started: str = field(default_factory=lambda: time.strftime("%Y-%m-%d %H:%M:%S %Z"))
    cores: int = field(default_factory=lambda: os.cpu_count() or 1)
    machine: str = field(default_factory=platform.platform)
    properties_wall_s: float = 0.0
    mutation_wall_s: float = 0.0
    total_s: float = 0.0
    targets: dict[str, TargetTime] = field(default_factory=dict)

    def target(self, label: str) -> TargetTime:
        return self.targets.setdefault(label, TargetTime(label))

    def read_mutation(self, label: str, mutation_json: Path) -> None:
        """Fill in a target's mutants and mutant-run time from its mutation.json."""
        t = self.target(label)
        try:
            mte = json.loads(mutation_json.read_text())
        except (OSError, ValueError):
            return
        t.mutants = sum(len(f.get("mutants", [])) for f in mte.get("files", {}).values())
        t.mutant_runs_s = mte.get("performance", {}).get("mutation", 0) / 1000.0
        peer = (mte.get("config") or {}).get("peer") or {}
        if peer.get("timings"):
            t.peer_s = sum(peer["timings"].get(k, 0.0) for k in ("baseline", "mutation"))

    def write(self, out_dir: Path) -> Path:
        out_dir.mkdir(parents=True, exist_ok=True)
        doc: dict[str, Any] = asdict(self)
        for label, t in self.targets.items():
            doc["targets"][label]["mutants_per_s"] = t.mutants_per_s
        (out_dir / "audit-time.json").write_text(json.dumps(doc, indent=1) + "\n")
        md = out_dir / "audit-time.md"
        md.write_text(self.markdown())
        return md

    def markdown(self) -> str:
        lines = [
            "# Time of the last audit run",
            "",
            f"`{self.command}` on {self.started}: profile `{self.profile}`, "
            f"{self.jobs} property jobs, {self.cores} cores ({self.machine}).",
            "",
            f"**Total {_min(self.total_s)}**: property suites {_min(self.properties_wall_s)} "
            f"(wall, {self.jobs} at a time), mutation {_min(self.mutation_wall_s)} "
            "(wall, one version at a time on every core).",
            "",
            "| target | properties | mutation run | share of mutation | mutants | "
            "mutants/s | of which peer suite |",
            "|---|---|---|---|---|---|---|",
        ]
        mutation_total = sum(t.mutation_s or 0.0 for t in self.targets.values())
        for t in self.targets.values():
            share = (
                f"{100 * t.mutation_s / mutation_total:.0f}%"
                if t.mutation_s and mutation_total
                else "–"
            )
            rate = t.mutants_per_s
            lines.append(
                f"| {t.label} | {t.properties_s:.0f} s | "
                + (f"{t.mutation_s:.0f} s" if t.mutation_s is not None else "–")
                + f" | {share} | {t.mutants if t.mutants is not None else '–'} | "
                + (f"{rate:.2f}" if rate else "–")
                + " | "
                + (f"{t.peer_s:.0f} s" if t.peer_s is not None else "–")
                + " |"
            )
        lines += [
            "",
            "A mutation run is the baseline run of the suite, the mutants, the recheck of "
            "gated survivors, the branch-coverage run and (gitreins) the peer suite; "
            "mutants/s counts the mutant runs only.",
            "",
        ]
        return "\n".join(lines)


def _min(seconds: float) -> str:
    return f"{seconds / 60:.1f} min ({seconds:.0f} s)"
