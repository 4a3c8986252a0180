"""Drive the worker process (``mutation/worker.py``) on a work copy and collect its verdicts.

The worker runs in this interpreter, or in a target's own (``Runtime``: a
lightspeed-stack tree's Python 3.12). Its results arrive as JSON lines on a pipe;
a worker that runs mutants in-process and ends with ``RESTART`` after a mutant hung
is started again and resumes after that mutant.
"""

from __future__ import annotations

import fnmatch
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mutation.config import TargetConfig
from mutation.engine import (
    REPO,
    TIMEOUT_CONSTANT,
    TIMEOUT_FACTOR,
    Mutant,
    MutationError,
    PeerRun,
    Plan,
    Progress,
)
from mutation.operators import GATED_KINDS


@dataclass(frozen=True)
class Runtime:
    """Where the worker runs for a target that needs its own interpreter (a
    lightspeed-stack tree: Python 3.12 and the tree's locked dependencies)."""

    python: str
    #: what in the environment can change a verdict (the lock's hash), for the cache key
    key: str
    #: the worker's environment for a work copy (the trampolined source folder)
    environ: Callable[[Path], dict[str, str]]


#: the worker's exit code after a mutant outlived its time in a run without forks: the
#: mutant's verdict (timeout) is written, and the engine starts the worker again
RESTART = 75


@dataclass(frozen=True)
class WorkerSettings:
    """How the worker runs a set of mutants on a work copy (:func:`run_worker`)."""

    #: the modules the work copy holds, imported before the baseline
    modules: Sequence[str] = ()
    #: mutants run at a time (forks; a worker without forks runs one)
    jobs: int = 2
    #: which mutants run a second time: gated, survivors, all or none
    recheck: str = "gated"
    #: pass 1 runs under the first seed; pass 3 rechecks kills under the others
    seeds: Sequence[int] = (0,)
    #: receives each of the worker's records (a peer's carry ``"suite": "peer"``)
    progress: Progress | None = None
    #: seconds a mutant gets beyond ``TIMEOUT_FACTOR`` times its tests' baseline time
    timeout_constant: float = TIMEOUT_CONSTANT
    #: another test suite (a peer's) instead of the target's configured tests
    suite: PeerRun | None = None
    #: run the worker in the target's own interpreter and environment
    runtime: Runtime | None = None
    #: what ``{tree}`` in the target's ``pytest_args`` stands for
    tests_root: str = ""

    @property
    def tag(self) -> str:
        """The prefix of the worker's files in the work folder (a peer's beside ours)."""
        return "peer-" if self.suite else ""


def run_worker(
    plan: Plan, cfg: TargetConfig, mutants: list[Mutant], work: Path, settings: WorkerSettings
) -> dict[str, Any]:
    """Run the worker on the work copy; fills in each mutant's status. Returns baseline info."""
    rfd, wfd = os.pipe()
    plan_file = work / f"{settings.tag}plan.json"
    plan_file.write_text(json.dumps(_worker_plan(cfg, mutants, work, settings, wfd), indent=1))
    code, baseline = _drive(plan_file, (rfd, wfd), mutants, settings)
    _check_worker(plan.target, work, settings.tag, code, baseline)
    seeds = list(settings.seeds)
    for m in mutants:
        _settle(m)
        m.seeds = list(seeds)
        if settings.suite is None:
            _robustness(m, seeds, gated=m.kind in GATED_KINDS or m.catalogue is not None)
    return baseline


def _worker_plan(
    cfg: TargetConfig, mutants: list[Mutant], work: Path, settings: WorkerSettings, result_fd: int
) -> dict[str, Any]:
    """The worker's plan file: what it runs, on which tests, how, and where it writes."""
    suite = settings.suite
    tests = list(suite.tests) if suite else list(cfg.tests)
    pytest_args = (
        list(suite.pytest_args)
        if suite
        else [a.replace("{tree}", settings.tests_root) for a in cfg.pytest_args]
    )
    deselect = [t for t, _r in (suite.deselect if suite else cfg.deselect)]
    return {
        "tree": str(work / "tree"),
        "package": cfg.package,
        "tests": tests,
        "pytest_args": pytest_args,
        "sys_path": list(suite.sys_path) if suite else [],
        "allow_unreached": suite is not None,
        "modules": sorted(set(settings.modules) | set(cfg.preload)),
        "preload": list(cfg.preload),
        "deselect": deselect,
        "mutants": [_worker_mutant(m, cfg, suite) for m in mutants],
        "jobs": settings.jobs,
        "isolation": "fork" if suite else cfg.isolation,
        "recheck": settings.recheck,
        "seeds": list(settings.seeds),
        "timeout_factor": TIMEOUT_FACTOR,
        "timeout_constant": settings.timeout_constant,
        "result_fd": result_fd,
    }


def _worker_mutant(m: Mutant, cfg: TargetConfig, suite: PeerRun | None) -> dict[str, Any]:
    """One mutant as the worker's plan names it; ``also_tests``: the subprocess tests
    that reach its function (the target's suite only)."""
    return {
        "id": m.id,
        "name": m.mutmut_name,
        "function_key": m.function_key,
        "gated": m.kind in GATED_KINDS or m.catalogue is not None,
        "also_tests": []
        if suite
        else [
            t
            for funcs, sub_tests, _r in cfg.subprocess_tests
            if any(fnmatch.fnmatchcase(m.function, f) for f in funcs)
            for t in sub_tests
        ],
    }


def _drive(
    plan_file: Path, pipe: tuple[int, int], mutants: list[Mutant], settings: WorkerSettings
) -> tuple[int, dict[str, Any]]:
    """Start the worker on ``plan_file`` and read its results from ``pipe``; start it
    again, resuming, each time a mutant hung it (``RESTART``). Returns its last exit code
    and its baseline record."""
    work, tag, runtime = plan_file.parent, settings.tag, settings.runtime
    rfd, wfd = pipe
    env = runtime.environ(work / "tree") if runtime else dict(os.environ)
    env["CTXAUDIT_PROFILE"] = "mutation"
    env.pop("MUTANT_UNDER_TEST", None)
    by_id = {m.id: m for m in mutants}
    baseline: dict[str, Any] = {}
    keep_path = work / f"{tag}results.jsonl"
    keep_path.write_text("")
    log = (work / f"{tag}worker.log").open("w")
    starts, first_start = 0, time.monotonic()
    while True:
        starts += 1
        proc = subprocess.Popen(
            [
                runtime.python if runtime else sys.executable,
                "-m",
                "mutation.worker",
                str(plan_file),
            ],
            cwd=REPO,
            env=env,
            pass_fds=(wfd,),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        os.close(wfd)
        baseline = _read_results(rfd, keep_path, by_id, settings, baseline, first_start)
        code = proc.wait()
        if code != RESTART or starts > len(mutants) + 1:
            break
        # a mutant hung the worker (no forks): go on where it stopped
        rfd, wfd = os.pipe()
        plan_doc = json.loads(plan_file.read_text(encoding="utf-8"))
        plan_doc.update(result_fd=wfd, resume=str(keep_path))
        plan_file.write_text(json.dumps(plan_doc, indent=1))
    log.close()
    return code, baseline


def _read_results(
    rfd: int,
    keep_path: Path,
    by_id: dict[str, Mutant],
    settings: WorkerSettings,
    baseline: dict[str, Any],
    since: float,
) -> dict[str, Any]:
    """The records one start of the worker writes, until it closes its end: each is
    kept in ``keep_path`` (what a restart resumes from), each verdict given to its
    mutant, each passed to the progress callback. Returns the baseline record (the one
    given, when this start sent none), with the time since ``since`` once it is done."""
    with os.fdopen(rfd) as results, keep_path.open("a", buffering=1) as keep:
        for line in results:
            keep.write(line)
            rec = json.loads(line)
            if rec["event"] == "baseline":
                baseline = rec
            elif rec["event"] == "result":
                _take_result(by_id[rec["id"]], rec)
            elif rec["event"] == "done":
                baseline["mutation_seconds"] = time.monotonic() - since
            if settings.progress is not None:
                settings.progress({**rec, "suite": "peer"} if settings.suite else rec)
    return baseline


def _check_worker(target: str, work: Path, tag: str, code: int, baseline: dict[str, Any]) -> None:
    """A worker that failed, or that imported a mutated module from anywhere but the
    work copy, is an error (its log's tail in the message)."""
    if code != 0 or not baseline:
        tail = (
            (work / f"{tag}worker.log")
            .read_text(encoding="utf-8", errors="replace")
            .strip()
            .splitlines()[-12:]
        )
        raise MutationError(
            f"{target}: the mutation worker failed (exit {code}); "
            f"see {work / (tag + 'worker.log')}: " + " | ".join(tail)
        )
    for name, file in baseline.get("modules", {}).items():
        if file is not None and not Path(file).resolve().is_relative_to((work / "tree").resolve()):
            raise MutationError(f"{target}: {name} was imported from {file}, not the work copy")


DETECTED = ("killed", "timeout", "crashed")


def _take_result(m: Mutant, rec: dict[str, Any]) -> None:
    if rec["pass"] == 1:
        m.status = rec["status"]
        m.seconds = rec["seconds"]
        m.tests = rec["tests"]
        m.killed_by = rec.get("killed_by")
        m.tests_completed = rec.get("tests_completed")
        m.reason = rec.get("reason", "")
        m.seed_free = bool(rec.get("seed_free"))
    elif rec["pass"] == 2:
        m.second_status = rec["status"]
    else:
        m.seed_checks.append(
            {k: rec.get(k) for k in ("seed", "status", "killed_by", "seed_free", "seconds")}
        )


def _settle(m: Mutant) -> None:
    """Combine the two passes: a verdict that changed is 'flaky'; a pass that gave no
    verdict (``error``) makes the mutant an error."""
    if m.second_status is None:
        return
    if "error" in (m.status, m.second_status):
        m.reason = m.reason or f"no verdict in the second run ({m.second_status})"
        m.status = "error"
        return
    first_detected = m.status in DETECTED
    second_detected = m.second_status in DETECTED
    if first_detected != second_detected:
        m.reason = f"flaky: {m.status} in the first run, {m.second_status} in the second"
        m.status = "flaky"


def _robustness(m: Mutant, seeds: list[int], gated: bool) -> None:
    """Is a detected gated mutant's kill robust? See ``mutation.worker`` (pass 3)."""
    m.robust, m.robust_reason, m.robust_by = None, "", None
    if not gated or m.status not in DETECTED or len(seeds) < 2:
        return
    if m.seed_free:
        m.robust, m.robust_by = "robust", "seed-free test"
        m.robust_reason = f"killed by {m.killed_by}, which does not use Hypothesis' seed"
        return
    for check in m.seed_checks:
        if check["status"] == "error":  # that seed gave no verdict: nothing proven
            m.robust = "seed-dependent"
            m.robust_reason = f"no verdict under seed {check['seed']} (error)"
            return
        if check["status"] not in DETECTED:
            m.robust = "seed-dependent"
            m.robust_reason = (
                f"{m.status} under seed {seeds[0]}"
                + (f" by {m.killed_by}" if m.killed_by else "")
                + f", {check['status']} under seed {check['seed']}"
            )
            return
        if check.get("seed_free"):
            m.robust, m.robust_by = "robust", "seed-free test"
            m.robust_reason = (
                f"killed by {check['killed_by']}, which does not use Hypothesis' seed "
                f"(found under seed {check['seed']})"
            )
            return
    checked = [seeds[0], *(c["seed"] for c in m.seed_checks)]
    if sorted(checked) == sorted(seeds):
        m.robust, m.robust_by = "robust", "every seed"
        m.robust_reason = "detected under every seed: " + ", ".join(map(str, checked))
    else:  # the recheck did not run (e.g. the worker was stopped): not proven
        m.robust = "seed-dependent"
        m.robust_reason = "not rechecked under seeds " + ", ".join(
            str(s) for s in seeds if s not in checked
        )
