"""Failure benchmark (issue 13): how long a developer waits for a failing
check's verdict, and how many lines it prints, on known broken targets.

    .venv/bin/python -m ctxaudit.failure_bench [--only SUBSTRING] [--suite NAME]
                                               [--profile ci] [--out reports/failure-benchmark.md]

Each case is (suite, broken target, command): the benchmark builds the broken
target in a temporary folder (a copy of the pinned gitreins with one break of
``tests/gitreins/broken_copies.py``; a copy of the repository with one ledger
mutant of ``tests/settlement/check_mutants.py``), runs the suite's command
against it as a developer would (``pytest <tests> -x``, the default profile,
default output options), and records:

- time to verdict: the command's wall time, from start to exit;
- time to shrink: Hypothesis's shrink phase (``CTXAUDIT_FAILURE_STATS``); time
  to find is the rest (start-up, collection, generation until the failure);
- output lines: everything the command printed.

A case passes when the command fails (the break is caught) under 30 s and in
under 100 lines. The cases run one after another; times are those of this
machine at that moment, given with a calibration figure from the same run.
Timing is measured here, never asserted in tests.

A case for another suite (lightspeed-stack) is one more :class:`Case` with a
``prepare`` that builds its broken target and returns the working folder and
the command's target options.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from ctxaudit import atomic
from ctxaudit.bench import calibrate
from ctxaudit.targets.gitreins import REPO_ROOT, resolve

#: measured by hand before issue 13's changes (commit 1f967a1, same machine, ci profile)
BEFORE = (
    "Before issue 13's changes (commit 1f967a1, measured by hand on this machine): the "
    "valve lockstep on v5-fourth-compaction took 217 s (all but half a second shrinking, "
    "with the explain phase tracing every example) and printed 6,212 lines, almost all "
    "the captured `Context budget ... compacting` warnings of every example Hypothesis "
    "tried; the issue measured `test_v7_valve_protects_cap` on another broken tree at "
    "25 s and 656 lines."
)
#: the columns a suite run in a child interpreter adds (lightspeed-stack)
CHILD_COLUMNS = [
    "In the tree's environment: the child pytest's wall time, from its start to its exit "
    "(this side's pytest start and the tree's resolution are the rest of the verdict); "
    "search: Hypothesis's generation until the failure, inside it; the rest of it is the "
    "interpreter's start and the service's (the app, OGX, the fake LLM).",
    "",
]
#: where a failing lightspeed-stack run's time went, before issue 13's changes there and
#: after (measured by hand on this machine, one break, load average 2-5: the machine was
#: shared with mutation runs)
LIGHTSPEED_PARTS = """\
Where the time of a failing lightspeed-stack run goes (remove-compacted-write, measured by \
hand with a timing plugin in the child, load average 2-5), before -> after:

- the environment's packages had no bytecode (uv installs none, children run with \
PYTHONDONTWRITEBYTECODE): every child compiled the ~4,600 modules it imports, ~6 s of the \
service's start; the runner now byte-compiles an environment's packages once (25 s, a stamp \
in the environment). Service start 12.6 s (quiet) / 19 s (load 4) -> 6-8 s (load 3-5).
- the 12 fixed programs of the known findings ran before the lockstep (3-5 s); a working \
tree (a path on a commit the registry names, such as a clone of main with a change) now \
leaves out the regions of the findings registered for that commit and runs no program \
first; the lockstep runs before the findings' tests, and `-x` reaches the child.
- the search: the failure came in the 10th example, ~45 requests in (12.7 s), and \
Hypothesis then searched on for other failures (at least 10 examples; every lockstep \
failure is raised at one place, so it never finds another): 13-14 s -> 1.1-2.7 s, the \
first example (`state.openings()`, the first step of Hypothesis's simplest example). The \
service now starts before the search, not in its first example.
- shrinking: the bound (20 s) was always hit, at 0.5-0.7 s a shrink example (20-40 \
steps each) -> 0.3-2 s, "nothing left to do" (a program of two steps); the lockstep's \
bound is now 10 s (tests/lightspeed/inenv/conftest.py), counted into the 30 s with the \
boot.
- the child's exit: 2-4 s of interpreter teardown (the app's and OGX's objects, a SQLite \
worker thread) -> 0 (the child ends with os._exit once pytest has written everything).
- the phase times: the parent session wrote its own (empty) list over the child's file; \
the parent now hands the child a file of its own and adds its entries.

Before these changes (commit 0cf8ba1, the same command, 8 breaks): 7 caught in 61-73 s \
with 67-92 lines, none under 30 s; store-ignores-flag was not caught, because the program \
of LS-UNSTORED-STORED (registered for the 0.6 line only) reproduced on the broken tree and \
its region (store=false) was left out."""
#: the case whose whole output the report shows (the issue's break)
EXAMPLE = "v5-fourth-compaction"
TIME_LIMIT = 30.0
LINE_LIMIT = 100

#: prepare(tmp) -> (working folder, target options for pytest)
Prepare = Callable[[Path], tuple[Path, list[str]]]


@dataclass(frozen=True)
class Case:
    suite: str  # a name for the suite
    target: str  # the broken target
    tests: tuple[str, ...]  # what pytest runs
    prepare: Prepare


def _module(rel: str) -> ModuleType:
    path = REPO_ROOT / rel
    name = f"_failure_bench_{path.stem}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def gitreins_break(name: str) -> Prepare:
    """A copy of the pinned gitreins with break ``name`` (broken_copies.BREAKS)."""

    def prepare(tmp: Path) -> tuple[Path, list[str]]:
        breaks = _module("tests/gitreins/broken_copies.py").BREAKS
        _prop, rel, old, new = breaks[name]
        pinned = resolve("")
        copy = tmp / "gitreins"
        shutil.copytree(pinned.root / "engine", copy / "engine")
        (copy / "PKG-INFO").write_text(
            f"Metadata-Version: 2.1\nName: gitreins\nVersion: {pinned.version}\n"
        )
        path = copy / rel
        text = path.read_text()
        if old not in text:
            raise SystemExit(f"break {name!r} no longer applies to {rel}")
        path.write_text(text.replace(old, new, 1))
        return REPO_ROOT, [f"--gitreins={copy}"]

    return prepare


def ledger_mutant(name: str) -> Prepare:
    """A copy of the repository with the ledger mutant ``name`` (check_mutants.MUTANTS)."""

    def prepare(tmp: Path) -> tuple[Path, list[str]]:
        check = _module("tests/settlement/check_mutants.py")
        (mutant,) = [m for m in check.MUTANTS if m.name == name]
        root = tmp / "repo"
        check.copy_repo(root)
        check.apply(root, mutant)
        return root, []

    return prepare


def lightspeed_break(name: str) -> Prepare:
    """A clone of lightspeed-stack at main with break ``name`` (tests/lightspeed/breaks.py)
    as an uncommitted change: a developer's working tree.

    Needs the repository (``CTXAUDIT_LIGHTSPEED_REPO``); the tree's environment is
    built or reused before the clock starts only if it was built before.
    """

    def prepare(tmp: Path) -> tuple[Path, list[str]]:
        from ctxaudit.targets.lightspeed import tree as lstree

        repo = lstree.repo_from(None)
        if repo is None:
            raise SystemExit("lightspeed-stack cases need CTXAUDIT_LIGHTSPEED_REPO")
        base = lstree.resolve("lightspeed-stack@main", repo)
        brk = {b.name: b for b in _module("tests/lightspeed/breaks.py").BREAKS}[name]
        clone, mirror = tmp / "tree", lstree.ensure_mirror(repo)
        clone_args = ["clone", "--quiet", "--shared", "--no-checkout", str(mirror), str(clone)]
        checkout_args = ["-C", str(clone), "checkout", "--quiet", "--detach", str(base.commit)]
        for args in (clone_args, checkout_args):
            subprocess.run(["git", *args], check=True, capture_output=True)
        path = clone / brk.file
        text = path.read_text()
        if text.count(brk.old) != 1:
            raise SystemExit(f"break {name!r} no longer applies to {brk.file}")
        path.write_text(text.replace(brk.old, brk.new))
        return REPO_ROOT, [f"--lightspeed-repo={repo}", f"--lightspeed={clone}"]

    return prepare


VALVE = ("tests/gitreins/test_valve_lockstep.py::test_valve_lockstep",)
VALVE_AND_PROGRAMS = (*VALVE, "tests/gitreins/test_valve_programs.py")
BUDGET = ("tests/gitreins/test_budget_lockstep.py",)
V7 = ("tests/gitreins/test_v7_valve_protects_cap.py",)
SETTLEMENT = ("tests/settlement/test_stateful.py",)
LIGHTSPEED = ("tests/lightspeed/test_lightspeed.py::test_lockstep_and_findings",)

CASES: list[Case] = [
    *[
        Case("gitreins budget lockstep", name, BUDGET, gitreins_break(name))
        for name in ("b1-cache-write-not-metered", "b2-input-cap-strict",
                     "b3-tool-call-costs-nothing", "b4-time-cap-late", "b5-reset-keeps-output")
    ],
    *[
        Case("gitreins valve lockstep", name, VALVE, gitreins_break(name))
        for name in ("v5-fourth-compaction", "v5-four-compactions", "v1-boundary",
                     "v1-gr-gap-062", "v3-no-reset-after-valve", "v4-progress-off-by-one")
    ],
    # V6 breaks: the lockstep under ci passes on them; the fixed programs catch them
    *[
        Case("gitreins valve lockstep + fixed programs", name, VALVE_AND_PROGRAMS,
             gitreins_break(name))
        for name in ("v6-429-compacts", "v6-transport-compacts")
    ],
    Case("gitreins V7 alone", "v1-gr-gap-062", V7, gitreins_break("v1-gr-gap-062")),
    *[
        Case("ledger settlement lockstep", name, SETTLEMENT, ledger_mutant(name))
        for name in ("removed write: query", "removed write: stream end",
                     "write doubled", "settled state ignored",
                     "second finisher also writes: interrupt callback",
                     "interrupt guard ignored: unknown or finished stream",
                     "explicit input stored instead of original", "store flag ignored: owner",
                     "C1 `>` -> `>=` (ratio side)")
    ],
    # lightspeed-stack (only with CTXAUDIT_LIGHTSPEED_REPO): the whole in-environment
    # suite as a developer runs it on a working tree, boot of app and OGX included
    *[
        Case("lightspeed-stack lockstep", name, LIGHTSPEED, lightspeed_break(name))
        for name in ("remove-compacted-write", "store-explicit-input", "write-twice",
                     "drop-marker", "threshold-at-equality", "store-ignores-flag",
                     "blocked-turn-lost", "compaction-visible", "a2a-turn-not-stored")
    ],
]  # fmt: skip


def run_case(case: Case, profile: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ctxaudit-failbench-") as tmp_name:
        tmp = Path(tmp_name)
        cwd, options = case.prepare(tmp)
        stats_path = tmp / "failure-stats.json"
        env = {
            **os.environ,
            "CTXAUDIT_PROFILE": profile,
            "CTXAUDIT_FAILURE_STATS": str(stats_path),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        for name in ("CTXAUDIT_RESULTS", "PYTHONPATH", "COLUMNS"):
            env.pop(name, None)
        command = ["pytest", *case.tests, *options, "-x"]
        started = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", *command, "-p", "no:cacheprovider"],
            cwd=cwd, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        wall = time.monotonic() - started
        stats = json.loads(stats_path.read_text()) if stats_path.exists() else []
    output = proc.stdout + proc.stderr
    failed = [s for s in stats if s.get("failed")]
    shrink = sum(float(s["shrink_seconds"]) for s in failed)
    # a suite run in a child interpreter (lightspeed-stack) prints its wall time there
    child = re.search(r"([0-9.]+) s in its environment", output)
    message = re.search(r"^(?:E\s+)?\w*(?:Error|Exception)\w*: (.*)$", output, re.M)
    return {
        "suite": case.suite,
        "target": case.target,
        "command": " ".join(["bin/ctxaudit test", *case.tests, "-x",
                             *(o.split("=")[0] + "=<broken copy>" for o in options)]),
        "exit": proc.returncode,
        "caught": proc.returncode == 1,
        "seconds": round(wall, 2),
        "find_seconds": round(wall - shrink, 2),
        "shrink_seconds": round(shrink, 2),
        "shrink_examples": sum(int(s["shrink_examples"]) for s in failed),
        "search_seconds": round(sum(float(s["find_seconds"]) for s in failed), 2),
        "search_examples": sum(int(s["find_examples"]) for s in failed),
        "child_seconds": float(child.group(1)) if child else None,
        "shrink_stopped": [s["stopped_because"] for s in failed],
        "lines": len(output.splitlines()),
        "failing_test": next(iter(s["nodeid"] for s in failed), ""),
        "message": message.group(1)[:160] if message else "",
        "output": output,
    }  # fmt: skip


def ok(row: dict[str, Any]) -> bool:
    return bool(row["caught"]) and row["seconds"] < TIME_LIMIT and row["lines"] < LINE_LIMIT


def render(
    rows: list[dict[str, Any]], unit: float, profile: str, took: float, load: float | None
) -> str:
    good = sum(ok(r) for r in rows)
    worst_t = max(rows, key=lambda r: r["seconds"])
    worst_l = max(rows, key=lambda r: r["lines"])
    load = float("nan") if load is None else load
    lines = [
        "# Failure benchmark: time to a verdict and lines on one screen (issue 13)",
        "",
        f"`python -m ctxaudit.failure_bench` on {time.strftime('%Y-%m-%d %H:%M')}, profile "
        f"`{profile}` (the default), default output options, one case after another in one "
        f"run ({took / 60:.1f} min). Shared 2-core machine (load average {load:.1f} at the "
        f"end); calibration unit (a fixed pure-Python workload, same run): {unit:.3f} s.",
        "",
        f"**{good} of {len(rows)} cases caught under {TIME_LIMIT:.0f} s and "
        f"{LINE_LIMIT} lines.** Slowest: {worst_t['seconds']:.1f} s "
        f"({worst_t['suite']}, {worst_t['target']}); longest output: {worst_l['lines']} lines "
        f"({worst_l['suite']}, {worst_l['target']}).",
        "",
        *([BEFORE, ""] if any("lightspeed" not in r["suite"] for r in rows) else []),
        "Time to verdict is the command's wall time (start-up and collection included); "
        "time to shrink is Hypothesis's shrink phase and time to find is the rest. Lines: "
        "everything the command printed (pytest's header and summary included).",
        "",
    ]
    for suite in dict.fromkeys(r["suite"] for r in rows):
        child = any(r.get("child_seconds") is not None for r in rows if r["suite"] == suite)
        lines += [
            f"## {suite}",
            "",
            f"`{next(r['command'] for r in rows if r['suite'] == suite)}`",
            "",
            *(CHILD_COLUMNS if child else []),
            "| broken target | caught | verdict (s) | find (s) | shrink (s) | shrink examples "
            + ("| in the tree's environment (s) | search (s) | search examples " if child else "")
            + "| lines | failure |",
            "|---|---|---|---|---|---|---|---|" + ("---|---|---|" if child else ""),
        ]
        for r in rows:
            if r["suite"] != suite:
                continue
            caught = "yes" if r["caught"] else f"**no** (exit {r['exit']})"
            mark = "" if ok(r) else " **over**"
            msg = r["message"].replace("|", "\\|")
            extra = ""
            if child:
                inside = r.get("child_seconds")
                extra = (
                    f" | {'' if inside is None else f'{inside:.1f}'}"
                    f" | {r.get('search_seconds', 0.0):.1f} | {r.get('search_examples', 0)}"
                )
            lines.append(
                f"| {r['target']} | {caught} | {r['seconds']:.1f}{mark} | {r['find_seconds']:.1f}"
                f" | {r['shrink_seconds']:.1f} | {r['shrink_examples']}{extra} | {r['lines']}"
                f" | {msg} |"
            )
        lines.append("")
        if child and all(r["suite"] == suite for r in rows):
            lines += [LIGHTSPEED_PARTS, ""]
    caught = [r for r in rows if r["caught"]]
    example = next((r for r in caught if r["target"] == EXAMPLE), caught[0] if caught else None)
    if example is not None:
        lines += [
            "## What a developer sees",
            "",
            f"{example['suite']}, {example['target']} (the whole output):",
            "",
            "```",
            *example["output"].rstrip().splitlines(),
            "```",
            "",
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ctxaudit.failure_bench")
    parser.add_argument("--only", default="", help="cases whose broken target contains this")
    parser.add_argument("--suite", default="", help="cases whose suite name contains this")
    parser.add_argument("--profile", default="ci", help="Hypothesis profile (default: ci)")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "reports" / "failure-benchmark.md")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument(
        "--render", type=Path, metavar="JSON", help="only write the report again from a JSON"
    )
    args = parser.parse_args(argv)
    if args.render:
        saved = json.loads(args.render.read_text())
        text = render(saved["cases"], saved["calibration_seconds"], saved["profile"],
                      saved["seconds"], saved.get("load"))  # fmt: skip
        atomic.write_text(args.out, text)
        return 0
    cases = [c for c in CASES if args.only in c.target and args.suite in c.suite]
    if not os.environ.get("CTXAUDIT_LIGHTSPEED_REPO"):
        cases = [c for c in cases if c.tests != LIGHTSPEED]
    if args.list:
        for c in cases:
            print(f"{c.suite}: {c.target}  ({' '.join(c.tests)})")
        return 0
    unit = calibrate()
    started = time.monotonic()
    rows = []
    for case in cases:
        row = run_case(case, args.profile)
        rows.append(row)
        print(
            f"{row['suite']:28} {row['target'][:40]:40} {'ok  ' if ok(row) else 'OVER'} "
            f"{row['seconds']:5.1f} s (shrink {row['shrink_seconds']:5.1f} s) "
            f"{row['lines']:4} lines  exit {row['exit']}",
            flush=True,
        )
    took = time.monotonic() - started
    args.out.parent.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()[0]
    atomic.write_text(args.out, render(rows, unit, args.profile, took, load))
    payload = {"profile": args.profile, "calibration_seconds": unit, "seconds": took,
               "load": load, "time_limit": TIME_LIMIT, "line_limit": LINE_LIMIT,
               "cases": rows}  # fmt: skip
    atomic.write_text(args.out.with_suffix(".json"), json.dumps(payload, indent=1))
    print(f"wrote {args.out} and {args.out.with_suffix('.json').name}")
    return 0 if all(ok(r) for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
