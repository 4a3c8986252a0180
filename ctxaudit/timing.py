"""Where the time of one ``ctxaudit audit`` run went: ``<out>/timing/audit-time.md``
and ``.json``.

The audit records the wall time of its two phases (the property suites, several
target versions at once; then mutation, one version at a time on every core) and,
per target version, the properties' time and the mutation run's time, mutants and
mutants per second (read from its ``mutation.json``). Measured in the run itself, on
whatever machine ran it; compare figures of one run with each other, not across runs.
The command is shown without machine paths: a path in this checkout relative to it,
any other absolute path as its option's name (``--out /x/y`` reads ``--out OUT``).
"""

from __future__ import annotations

import json
import os
import platform
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ctxaudit import atomic
from ctxaudit.paths import REPO_ROOT
from ctxaudit.templating import render

#: the folder of a report folder that holds the timing reports
FOLDER = "timing"

#: an absolute path in a command line, alone or as an option's value, quoted or not
_ABSOLUTE = re.compile(
    r"""(?:(?P<opt>--[\w-]+)(?:=|\s+)|(?<=\s))"""
    r"""(?P<value>'(?P<sq>/[^']*)'|"(?P<dq>/[^"]*)"|(?P<bare>/[^\s'"]*))"""
)


def shown_command(command: str) -> str:
    """``command`` without machine paths: a path in this checkout relative to it, any
    other absolute path as its option's name in capitals (``PATH`` when it has none)."""

    def one(m: re.Match[str]) -> str:
        quote = "'" if m["sq"] is not None else '"' if m["dq"] is not None else ""
        path = Path(m["sq"] or m["dq"] or m["bare"])
        if path.is_relative_to(REPO_ROOT):
            shown = path.relative_to(REPO_ROOT).as_posix() or "."
        elif m["opt"]:
            shown = m["opt"].lstrip("-").upper().replace("-", "_")
        else:
            shown = "PATH"
        return m[0][: m.start("value") - m.start()] + quote + shown + quote

    return _ABSOLUTE.sub(one, command)


@dataclass
class TargetTime:
    label: str
    properties_s: float = 0.0
    mutation_s: float | None = None
    mutants: int | None = None
    mutant_runs_s: float | None = None  # the mutants themselves (no baseline, coverage, peer)
    peer_s: float | None = None
    #: of properties_s: the fix audit (fixes verified, the fully fixed tree, attribution)
    fixes_s: float | None = None
    #: the step was reused from the audit's step cache (ctxaudit/result_cache.py)
    properties_reused: bool = False
    mutation_reused: bool = False
    verdicts_reused: int | None = None  # mutant verdicts the mutation run reused

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

    def __post_init__(self) -> None:
        self.command = shown_command(self.command)

    @property
    def title(self) -> str:
        """Which run this is: the target versions it audited and when it started."""
        audited = ", ".join(self.targets) or "no target version"
        return f"Time of the audit of {audited} ({self.started})"

    def target(self, label: str) -> TargetTime:
        return self.targets.setdefault(label, TargetTime(label))

    def read_mutation(self, label: str, mutation_json: Path) -> None:
        """Fill in a target's mutants and mutant-run time from its mutation.json."""
        t = self.target(label)
        try:
            mte = json.loads(mutation_json.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        t.mutants = sum(len(f.get("mutants", [])) for f in mte.get("files", {}).values())
        t.mutant_runs_s = mte.get("performance", {}).get("mutation", 0) / 1000.0
        cache = (mte.get("config") or {}).get("cache") or {}
        t.verdicts_reused = cache.get("reused") if cache.get("used") else None
        peer = (mte.get("config") or {}).get("peer") or {}
        if peer.get("timings"):
            t.peer_s = sum(peer["timings"].get(k, 0.0) for k in ("baseline", "mutation"))

    def write(self, out_dir: Path) -> Path:
        """Write ``audit-time.md`` and ``.json`` to the timing folder of the report
        folder ``out_dir``; returns the markdown's path."""
        folder = out_dir / FOLDER
        folder.mkdir(parents=True, exist_ok=True)
        doc: dict[str, Any] = asdict(self)
        for label, t in self.targets.items():
            doc["targets"][label]["mutants_per_s"] = t.mutants_per_s
        atomic.write_text(folder / "audit-time.json", json.dumps(doc, indent=1) + "\n")
        md = folder / "audit-time.md"
        atomic.write_text(md, self.markdown())
        return md

    def mutation_share(self, t: TargetTime) -> float | None:
        """The target's share of all mutation time, in percent."""
        total = sum(x.mutation_s or 0.0 for x in self.targets.values())
        return 100 * t.mutation_s / total if t.mutation_s and total else None

    def markdown(self) -> str:
        return render("audit-time.md.j2", t=self)


def calibrate() -> float:
    """Seconds for a fixed pure-Python workload (best of three): the unit benchmarks
    state their figures in, so that runs on a loaded and a quiet machine compare."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        total = 0
        for i in range(2_000_000):
            total += i % 7
        best = min(best, time.perf_counter() - started)
    return best
