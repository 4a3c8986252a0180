"""Statement and branch coverage (coverage.py) of a target's configured suite over the
unmutated target, restricted to the functions in the mutated scope: the figure a
mutation report shows beside its kills. It decides no verdict.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from libcst.metadata import MetadataWrapper, PositionProvider

from mutation.config import TargetConfig
from mutation.engine import REPO, TIMEOUT_FACTOR, Plan
from mutation.operators import function_index

#: coverage.py's patches that follow the suite into its child processes: ``subprocess``
#: (a new interpreter, e.g. ``python -m ctxaudit.targets.gitreins.config``, starts
#: coverage from the configuration the parent puts in its environment, through the
#: ``.pth`` coverage installs), ``fork`` (a forked child restarts coverage and saves its
#: own data) and ``_exit`` (a child that ends with ``os._exit`` still saves it)
COVERAGE_PATCHES = ("subprocess", "fork", "_exit")


def coverage_rc(plan: Plan, data_file: Path) -> str:
    """The coverage configuration of :func:`branch_coverage`: branches, every process
    its own data file (``parallel``, combined after), only the files in scope (by their
    real paths, the same in every process), the child-process patches."""
    include = sorted(str((plan.root / path).resolve()) for path in plan.files)
    lines = ["[run]", "branch = True", "parallel = True", f"data_file = {data_file}"]
    lines += ["include =", *[f"    {p}" for p in include]]
    lines += ["patch =", *[f"    {p}" for p in COVERAGE_PATCHES]]
    return "\n".join(lines) + "\n"


def coverage_timeout(baseline_seconds: float | None) -> float:
    """How long the suite may take under coverage.py before the figure is given up (the
    mutants' rule, :data:`TIMEOUT_FACTOR` x the baseline, plus a minute; 15 min when the
    baseline did not run). It decides only whether a figure is shown, never a verdict."""
    if not baseline_seconds:
        return 900.0
    return TIMEOUT_FACTOR * baseline_seconds + 60.0


def branch_coverage(
    plan: Plan,
    cfg: TargetConfig,
    tests_root_arg: str,
    work: Path,
    runtime: Any = None,
    timeout: float | None = None,
) -> dict[str, Any] | None:
    """Statement and branch coverage (coverage.py) of the suite over the unmutated
    target, restricted to the mutated scope, in every process the suite starts (forks
    and subprocesses too, :data:`COVERAGE_PATCHES`; ``processes`` says how many wrote
    data). ``runtime`` (a ``driver.Runtime``): run it in the target's own interpreter and
    environment, as the worker runs there, with the target's own source folder.
    ``timeout``: a suite that runs longer under coverage is stopped (its process group)
    and the figure is "not measured", with the reason."""
    folder = work / "coverage"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    out = folder / "coverage.json"
    rc = folder / "coveragerc"
    rc.write_text(coverage_rc(plan, folder / ".coverage"))
    python, env = _coverage_environment(plan, folder, runtime)
    coverage = [python, "-m", "coverage"]
    args = [*coverage, "run", f"--rcfile={rc}", *_suite_arguments(cfg, tests_root_arg)]
    t0 = time.monotonic()
    proc = _run_stoppable(args, env, timeout)
    if proc is None:
        core = "" if runtime is None else " in the target's interpreter"
        return {
            "error": f"the suite under coverage.py{core} did not finish within {timeout:.0f} s "
            "(stopped there: coverage's tracer slows it down that much)"
        }
    processes = len(list(folder.glob(".coverage.*")))
    if processes == 0:
        why = _last_line(proc)
        return {"error": f"coverage wrote no data (exit {proc.returncode}: {why[:200]})"}
    error = _coverage_json(coverage, rc, out, env)
    if error is not None:
        return {"error": error}
    per_file = _coverage_in_scope(
        json.loads(out.read_text(encoding="utf-8")), _scope_spans(plan, cfg)
    )
    totals = {
        k: sum(f[k] for f in per_file.values())
        for k in ("statements", "covered_statements", "branches", "covered_branches")
    }
    return {
        "files": per_file,
        "totals": totals,
        "seconds": time.monotonic() - t0,
        "tests_exit": proc.returncode,
        "processes": processes,
    }


def _coverage_environment(plan: Plan, folder: Path, runtime: Any) -> tuple[str, dict[str, str]]:
    """The interpreter and environment the suite runs in under coverage: ours, or with a
    ``runtime`` the target's own; never a mutant's or an outer coverage run's variables."""
    python = sys.executable
    if runtime is not None:
        python = runtime.python
        # the environment for a source folder in place of the target's: its own one,
        # through a link (the real paths coverage records are the tree's)
        src = folder / "src"
        src.symlink_to(plan.root.resolve(), target_is_directory=True)
        env = runtime.environ(src)
    else:
        env = dict(os.environ)
    env["CTXAUDIT_PROFILE"] = "mutation"
    for name in ("MUTANT_UNDER_TEST", "COVERAGE_PROCESS_START", "COVERAGE_PROCESS_CONFIG"):
        env.pop(name, None)
    return python, env


def _suite_arguments(cfg: TargetConfig, tests_root_arg: str) -> list[str]:
    """``-m pytest`` and the arguments of the target's configured suite, as the worker
    runs it (its deselected tests left out), without the cache and pytest-cov plugins."""
    return [
        "-m",
        "pytest",
        *cfg.tests,
        *[a.replace("{tree}", tests_root_arg) for a in cfg.pytest_args],
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:cov",
        *[f"--deselect={test}" for test, _reason in cfg.deselect],
    ]


def _run_stoppable(
    args: list[str], env: dict[str, str], timeout: float | None
) -> subprocess.CompletedProcess[str] | None:
    """Run ``args`` in its own process group; None when it outlived ``timeout`` and was
    stopped (the whole group, so that the children it started stop too)."""
    suite = subprocess.Popen(
        args, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,  # its own process group, so a stop reaches its children
    )  # fmt: skip
    try:
        stdout, stderr = suite.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(suite.pid, signal.SIGKILL)
        suite.communicate()
        return None
    return subprocess.CompletedProcess(args, suite.returncode, stdout, stderr)


def _last_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The last line a process wrote (stderr first), to say why it failed in one line."""
    return (proc.stderr.strip().splitlines() or proc.stdout.strip().splitlines() or ["?"])[-1]


def _coverage_json(coverage: list[str], rc: Path, out: Path, env: dict[str, str]) -> str | None:
    """Combine the processes' data and write it as JSON to ``out``; the error (None: done)."""
    for step in (
        ["combine", "-q", f"--rcfile={rc}"],
        ["json", "-q", f"--rcfile={rc}", "-o", str(out)],
    ):
        got = subprocess.run(
            [*coverage, *step], cwd=REPO, env=env, capture_output=True, text=True, check=False
        )
        if got.returncode != 0 or (step[0] == "json" and not out.exists()):
            why = _last_line(got)
            return f"coverage {step[0]} failed (exit {got.returncode}: {why[:200]})"
    return None


def _scope_spans(plan: Plan, cfg: TargetConfig) -> dict[str, list[tuple[int, int]]]:
    """path -> the (first, last) lines of each function in scope: the lines counted."""
    spans: dict[str, list[tuple[int, int]]] = {}
    dead = cfg.dead_functions(plan.root)
    for path, fp in plan.files.items():
        positions = MetadataWrapper(fp.module, unsafe_skip_copy=True).resolve(PositionProvider)
        for qual, _c, node in function_index(fp.module).values():
            if cfg.in_scope(path, qual, fp.module.code_for_node(node), dead):
                pos = positions[node]
                spans.setdefault(path, []).append((pos.start.line, pos.end.line))
    return spans


def _coverage_in_scope(
    data: dict[str, Any], spans: dict[str, list[tuple[int, int]]]
) -> dict[str, dict[str, int]]:
    """path -> statements and branches (all, covered) of coverage.py's JSON ``data``
    inside the functions in scope (a branch counts where it starts)."""
    per_file: dict[str, dict[str, int]] = {}
    for key, fdata in data.get("files", {}).items():
        found = next((p for p in spans if key.replace(os.sep, "/").endswith(p)), None)
        if found is None:
            continue

        def inside(line: int, path: str = found) -> bool:
            return any(a <= line <= b for a, b in spans[path])

        per_file[found] = {
            "statements": sum(
                1 for ln in fdata["executed_lines"] + fdata["missing_lines"] if inside(ln)
            ),
            "covered_statements": sum(1 for ln in fdata["executed_lines"] if inside(ln)),
            "branches": sum(
                1
                for b in fdata.get("executed_branches", []) + fdata.get("missing_branches", [])
                if inside(b[0])
            ),
            "covered_branches": sum(1 for b in fdata.get("executed_branches", []) if inside(b[0])),
        }
    return per_file
