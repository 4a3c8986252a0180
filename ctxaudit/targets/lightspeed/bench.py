"""Benchmark of the lightspeed-stack target, written to reports/benchmarks/lightspeed-target.md.

    python -m ctxaudit.targets.lightspeed.bench --lightspeed-repo PATH [--target SPEC]

Separately: the environment's build (as recorded when it was built; 0 when
this run reused it), the service's start, one request end to end through the
app, OGX and the fake LLM (median per path), the lockstep's examples per
second, and the whole in-environment suite under the ``ci`` profile. Times on
this noisy machine come with a calibration figure from the same run, so runs
compare as ratios.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from ctxaudit import atomic
from ctxaudit.paths import REPO_ROOT
from ctxaudit.targets.lightspeed import env as lsenv
from ctxaudit.targets.lightspeed import runner
from ctxaudit.targets.lightspeed.tree import repo_from, resolve


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ctxaudit.targets.lightspeed.bench")
    parser.add_argument("--lightspeed-repo", help="the repository (or $CTXAUDIT_LIGHTSPEED_REPO)")
    parser.add_argument("--target", default="lightspeed-stack@main")
    parser.add_argument("--requests", type=int, default=15)
    parser.add_argument(
        "--out",
        type=Path,
        default=REPO_ROOT / "reports" / "benchmarks",
        help="report folder (default: reports/benchmarks)",
    )
    args = parser.parse_args(argv)
    tree = resolve(args.target, repo_from(args.lightspeed_repo))
    env = lsenv.ensure_env(tree)
    stamp_file = env.root / lsenv.STAMP
    stamp = json.loads(stamp_file.read_text(encoding="utf-8")) if stamp_file.exists() else {}
    proc = subprocess.run(
        [str(env.python), "-m", "tests.lightspeed.inenv.bench", str(args.requests)],
        cwd=REPO_ROOT,
        env=runner.child_env(env, tree),
        capture_output=True,
        text=True,
        check=False,
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("CTXAUDIT-BENCH ")]
    if proc.returncode != 0 or not lines:
        print(proc.stdout[-3000:] + proc.stderr[-3000:], file=sys.stderr)
        return 1
    data = json.loads(lines[-1].removeprefix("CTXAUDIT-BENCH "))
    suite = runner.run_suite(tree, [runner.INENV], profile="ci")
    cal = data["calibration_s"]
    rows = "\n".join(
        f"| {path} | {1000 * s:.0f} ms | {s / cal:.1f} |"
        for path, s in data["median_request_s"].items()
    )
    per_example = data["lockstep_s"] / max(1, data["lockstep_examples"])
    examples = f"{data['lockstep_examples']} in {data['lockstep_s']:.1f} s"
    verdict = "passed" if suite.passed else "FAILED"
    suite_cell = f"{suite.seconds:.0f} s ({verdict}) | {suite.seconds / cal:.0f}"
    text = f"""# lightspeed-stack target: speed

Tree `{tree.label}` (commit `{(tree.commit or "")[:12]}`), environment `{env.lock_hash}`,
measured by `python -m ctxaudit.targets.lightspeed.bench` on this 2-core machine. The
calibration workload (a fixed pure-Python loop, best of three) took **{cal:.3f} s** in
the same child process; the last column of each table divides by it.

## Environment (built once per lock, then reused)

| what | figure |
|---|---|
| build time recorded when this environment was built | {stamp.get("build_seconds", "?")} s |
| size | {env.size_bytes / 1e9:.2f} GB |

Built from the tree's `uv.lock` (`uv export --frozen --no-dev`) plus ctxaudit's test pins.
A warm uv cache makes a build take seconds; a cold one downloads about 1 GB.

## One request end to end (app, OGX, fake LLM), median of {data["requests_per_path"]}

| path | median | / calibration |
|---|---|---|
{rows}

## The lockstep

| what | figure | / calibration |
|---|---|---|
| service start (imports, app lifespan, OGX) | {data["boot_s"]:.1f} s | {data["boot_s"] / cal:.0f} |
| examples (20 steps at most, no shrinking) | {examples} | |
| examples per second | {1 / per_example:.2f} | |
| the in-environment suite under `ci` (programs, lockstep, regressions) | {suite_cell} |
"""
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "lightspeed-target.md"
    atomic.write_text(path, text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
