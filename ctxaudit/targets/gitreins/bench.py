"""Benchmark of the gitreins suite: wall time, examples and steps per example
under a profile, written to reports/benchmarks/gitreins-suite.md.

    python -m ctxaudit.targets.gitreins.bench [--profile ci] [--gitreins SPEC]

Times are given with a calibration figure measured in the same run (a fixed
pure-Python workload), so runs on a noisy or different machine compare as
ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ctxaudit import atomic
from ctxaudit.paths import REPO_ROOT
from ctxaudit.timing import calibrate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ctxaudit.targets.gitreins.bench")
    parser.add_argument("--profile", default="ci")
    parser.add_argument("--gitreins", default="")
    parser.add_argument(
        "--out", type=Path, default=REPO_ROOT / "reports" / "benchmarks" / "gitreins-suite.md"
    )
    args = parser.parse_args(argv)
    unit = calibrate()
    with tempfile.TemporaryDirectory() as tmp:
        stats_path = Path(tmp) / "stats.json"
        env = {**os.environ, "CTXAUDIT_PROFILE": args.profile, "CTXAUDIT_STATS": str(stats_path)}
        cmd = [sys.executable, "-m", "pytest", "tests/gitreins", "-q", "-p", "no:cacheprovider",
               "--durations=0", "--durations-min=0.05", "--show-capture=no"]  # fmt: skip
        if args.gitreins:
            cmd.append(f"--gitreins={args.gitreins}")
        started = time.monotonic()
        proc = subprocess.run(
            cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=False
        )
        wall = time.monotonic() - started
        stats = json.loads(stats_path.read_text(encoding="utf-8")) if stats_path.exists() else {}
    durations = re.findall(r"^([\d.]+)s call\s+(\S+)$", proc.stdout, flags=re.M)
    by_file: dict[str, float] = {}
    for secs, node in durations:
        by_file[node.split("::")[0]] = by_file.get(node.split("::")[0], 0.0) + float(secs)
    summary = (proc.stdout.strip().splitlines() or ["?"])[-1].strip("= ")
    lines = [
        "# gitreins suite: run time and size",
        "",
        f"Profile `{args.profile}`, target `{args.gitreins or 'pinned'}`, "
        f"`python -m ctxaudit.targets.gitreins.bench` on {time.strftime('%Y-%m-%d')}. "
        "Shared 2-core machine; "
        f"calibration unit (fixed pure-Python workload, same run): {unit:.3f} s.",
        "",
        f"Result: {summary}. Wall time {wall:.1f} s = {wall / unit:.0f} calibration units.",
        "",
        "| test file | time (s) | in calibration units |",
        "|---|---|---|",
    ]
    for path, secs in sorted(by_file.items(), key=lambda kv: -kv[1]):
        lines.append(f"| `{path}` | {secs:.1f} | {secs / unit:.0f} |")
    lines += [
        "",
        "| state machine | examples (incl. invalid) | steps | steps per example |",
        "|---|---|---|---|",
    ]
    for name, s in stats.items():
        lines.append(f"| {name} | {s['examples']} | {s['steps']} | {s['steps_per_example']:.1f} |")
    lines += [
        "",
        "Steps per example is low for the valve machine by nature: a run ends at its verdict, a "
        "failure or a cap, and Hypothesis also draws short programs; `min_calls` keeps a share "
        "of runs going deep (up to 12 LLM calls).",
    ]
    lines += ["", *config_child_lines(args.profile, args.gitreins, unit)]
    atomic.write_text(args.out, "\n".join(lines) + "\n")
    print(args.out.read_text(encoding="utf-8"))
    return proc.returncode


CONFIG_TESTS = [
    "tests/gitreins/test_caps_config.py",
    "tests/gitreins/test_config.py",
    "tests/gitreins/test_findings.py",
]


def config_child_lines(profile: str, gitreins: str, unit: float) -> list[str]:
    """The configuration tests with their children forked (the default) and spawned as
    new interpreters (CTXAUDIT_CONFIG_CHILD=spawn), one after the other in this run."""
    times = {}
    for mode in ("fork", "spawn"):
        env = {**os.environ, "CTXAUDIT_PROFILE": profile, "CTXAUDIT_CONFIG_CHILD": mode}
        env["CTXAUDIT_FINDINGS"] = "all"  # every finding's regression test runs its cases
        cmd = [sys.executable, "-m", "pytest", *CONFIG_TESTS, "-q", "-p", "no:cacheprovider"]
        if gitreins:
            cmd.append(f"--gitreins={gitreins}")
        started = time.monotonic()
        subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, check=False)
        times[mode] = time.monotonic() - started
    return [
        "## Configuration cases: forked child vs new interpreter",
        "",
        "The B6/V8 cases run the target in a memory-limited child. The same three test "
        "files, same run:",
        "",
        "| child | wall time (s) | in calibration units |",
        "|---|---|---|",
        *[f"| {m} | {t:.1f} | {t / unit:.0f} |" for m, t in times.items()],
        "",
        f"Spawning costs {times['spawn'] / times['fork']:.1f}x the forked run.",
    ]


if __name__ == "__main__":
    raise SystemExit(main())
