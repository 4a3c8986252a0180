"""Failure benchmark: how long a developer waits for a failing check's verdict,
and how many lines it prints, on known broken targets.

    .venv/bin/python -m tests.failure_bench [--only SUBSTRING] [--suite NAME]
                                               [--profile ci] [--out reports/benchmarks/failure.md]

Each case is (suite, broken target, command): the benchmark builds the broken
target in a temporary folder (a copy of the pinned gitreins with one break of
``tests/gitreins/broken_copies.py``; a copy of the repository with one ledger
mutant of ``tests/settlement/check_mutants.py``; a clone of lightspeed-stack with
one break of ``tests/lightspeed/breaks.py``), runs the suite's command against it
as a developer would (``pytest <tests> -x``, the default profile, default output
options), and records:

- time to verdict: the command's wall time, from start to exit;
- time to shrink: Hypothesis's shrink phase (``CTXAUDIT_FAILURE_STATS``); time
  to find is the rest (start-up, collection, generation until the failure);
- output lines: everything the command printed.

A case passes when the command fails (the break is caught) under 30 s and in
under 100 lines. The cases run one after another; times are those of this
machine at that moment, given with a calibration figure from the same run.
Timing is measured here, never asserted in tests. The report shows no machine
path: the temporary folder reads ``<tmp>``, this checkout ``<repo>`` and a target
option's path ``<option name>``.

The breaks belong to the suites, under ``tests/``, which the package never imports:
the checkout's ``tests/broken_target.py`` builds a case's broken target in a child
interpreter, as the suites themselves run in one. A case for another suite is one
more :class:`Case` with a ``prepare`` that builds its broken target and returns the
working folder and the command's target options.
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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxaudit import atomic
from ctxaudit.paths import REPO_ROOT
from ctxaudit.timing import calibrate

#: the columns a suite run in a child interpreter adds (lightspeed-stack)
CHILD_COLUMNS = [
    "In the tree's environment: the child pytest's wall time, from its start to its exit "
    "(this side's pytest start and the tree's resolution are the rest of the verdict); "
    "search: Hypothesis's generation until the failure, inside it; the rest of it is the "
    "interpreter's start and the service's (the app, OGX, the fake LLM).",
    "",
]
#: the case whose whole output the report shows
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


#: the checkout's builder of one broken target, run as a child (``python -m``)
BUILDER = "tests.broken_target"


def broken(kind: str, name: str) -> Prepare:
    """Break ``name`` of the suite ``kind`` (gitreins, ledger, lightspeed), built by
    the checkout's ``tests/broken_target.py`` in the case's temporary folder."""

    def prepare(tmp: Path) -> tuple[Path, list[str]]:
        proc = subprocess.run(
            [sys.executable, "-m", BUILDER, kind, name, str(tmp)],
            cwd=REPO_ROOT, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if proc.returncode != 0:
            why = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
            raise SystemExit(
                f"{kind} break {name!r} not built: {why[-1] if why else proc.returncode}"
            )
        built = json.loads(proc.stdout.strip().splitlines()[-1])
        return Path(built["cwd"]), [str(o) for o in built["options"]]

    return prepare


def gitreins_break(name: str) -> Prepare:
    """A copy of the pinned gitreins with break ``name`` (broken_copies.BREAKS)."""
    return broken("gitreins", name)


def ledger_mutant(name: str) -> Prepare:
    """A copy of the repository with the ledger mutant ``name`` (check_mutants.MUTANTS)."""
    return broken("ledger", name)


def lightspeed_break(name: str) -> Prepare:
    """A clone of lightspeed-stack at main with break ``name`` (tests/lightspeed/breaks.py)
    as an uncommitted change: a developer's working tree.

    Needs the repository (``CTXAUDIT_LIGHTSPEED_REPO``); the tree's environment is
    built or reused before the clock starts only if it was built before.
    """
    return broken("lightspeed", name)


def shown(text: str, tmp: Path, options: list[str]) -> str:
    """``text`` without machine paths: the case's temporary folder as ``<tmp>``, a
    target option's path as ``<option name>``, this checkout as ``<repo>``."""
    for path in dict.fromkeys([str(tmp.resolve()), str(tmp)]):
        text = text.replace(path, "<tmp>")
    for option in options:
        name, _, value = option.partition("=")
        if value.startswith("/"):
            text = text.replace(value, f"<{name.lstrip('-')}>")
    text = text.replace(str(REPO_ROOT), "<repo>")
    for prefix, name in ((sys.prefix, "<venv>"), (sys.base_prefix, "<python>")):
        text = text.replace(prefix, name)
    return text


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
        output = shown(proc.stdout + proc.stderr, tmp, options)
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
    rows: list[dict[str, Any]],
    unit: float,
    profile: str,
    took: float,
    load: float | None,
    date: str = "",
) -> str:
    """The report of a run; ``date`` is when it ran (default: now)."""
    good = sum(ok(r) for r in rows)
    worst_t = max(rows, key=lambda r: r["seconds"])
    worst_l = max(rows, key=lambda r: r["lines"])
    load = float("nan") if load is None else load
    lines = [
        "# Failure benchmark: time to a verdict and lines on one screen",
        "",
        f"`python -m tests.failure_bench` on {date or time.strftime('%Y-%m-%d %H:%M')}, profile "
        f"`{profile}` (the default), default output options, one case after another in one "
        f"run ({took / 60:.1f} min). Shared 2-core machine (load average {load:.1f} at the "
        f"end); calibration unit (a fixed pure-Python workload, same run): {unit:.3f} s.",
        "",
        f"**{good} of {len(rows)} cases caught under {TIME_LIMIT:.0f} s and "
        f"{LINE_LIMIT} lines.** Slowest: {worst_t['seconds']:.1f} s "
        f"({worst_t['suite']}, {worst_t['target']}); longest output: {worst_l['lines']} lines "
        f"({worst_l['suite']}, {worst_l['target']}).",
        "",
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
    parser = argparse.ArgumentParser(prog="python -m tests.failure_bench")
    parser.add_argument("--only", default="", help="cases whose broken target contains this")
    parser.add_argument("--suite", default="", help="cases whose suite name contains this")
    parser.add_argument("--profile", default="ci", help="Hypothesis profile (default: ci)")
    parser.add_argument(
        "--out", type=Path, default=REPO_ROOT / "reports" / "benchmarks" / "failure.md"
    )
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument(
        "--render", type=Path, metavar="JSON", help="only write the report again from a JSON"
    )
    args = parser.parse_args(argv)
    if args.render:
        saved = json.loads(args.render.read_text())
        text = render(saved["cases"], saved["calibration_seconds"], saved["profile"],
                      saved["seconds"], saved.get("load"), saved.get("date", ""))  # fmt: skip
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
    date = time.strftime("%Y-%m-%d %H:%M")
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
    atomic.write_text(args.out, render(rows, unit, args.profile, took, load, date))
    payload = {"profile": args.profile, "date": date, "calibration_seconds": unit,
               "seconds": took, "load": load, "time_limit": TIME_LIMIT,
               "line_limit": LINE_LIMIT, "cases": rows}  # fmt: skip
    atomic.write_text(args.out.with_suffix(".json"), json.dumps(payload, indent=1))
    print(f"wrote {args.out} and {args.out.with_suffix('.json').name}")
    return 0 if all(ok(r) for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
