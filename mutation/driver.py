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


def run_worker(
    plan: Plan,
    cfg: TargetConfig,
    mutants: list[Mutant],
    work: Path,
    tests_root_arg: str,
    jobs: int,
    recheck: str,
    progress: Progress | None,
    modules: list[str],
    timeout_constant: float = TIMEOUT_CONSTANT,
    *,
    suite: PeerRun | None = None,
    seeds: Sequence[int] = (0,),
    runtime: Runtime | None = None,
) -> dict[str, Any]:
    """Run the worker on the work copy; fills in each mutant's status. Returns baseline info.

    ``suite`` runs another test suite (a peer's) instead of the target's configured tests.
    ``runtime``: run the worker in the target's own interpreter and environment.
    """
    rfd, wfd = os.pipe()
    tag = "peer-" if suite else ""
    if runtime is not None and suite is not None:
        raise MutationError(f"{plan.target}: no peer suite for a target run in its own environment")
    plan_file = work / f"{tag}plan.json"
    tests = list(suite.tests) if suite else list(cfg.tests)
    pytest_args = (
        list(suite.pytest_args)
        if suite
        else [a.replace("{tree}", tests_root_arg) for a in cfg.pytest_args]
    )
    deselect = [t for t, _r in (suite.deselect if suite else cfg.deselect)]
    plan_file.write_text(
        json.dumps(
            {
                "tree": str(work / "tree"),
                "package": cfg.package,
                "tests": tests,
                "pytest_args": pytest_args,
                "sys_path": list(suite.sys_path) if suite else [],
                "allow_unreached": suite is not None,
                "modules": sorted(set(modules) | set(cfg.preload)),
                "preload": list(cfg.preload),
                "deselect": deselect,
                "mutants": [
                    {
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
                    for m in mutants
                ],
                "jobs": jobs,
                "isolation": "fork" if suite else cfg.isolation,
                "recheck": recheck,
                "seeds": list(seeds),
                "timeout_factor": TIMEOUT_FACTOR,
                "timeout_constant": timeout_constant,
                "result_fd": wfd,
            },
            indent=1,
        )
    )
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
        with os.fdopen(rfd) as results, keep_path.open("a", buffering=1) as keep:
            for line in results:
                keep.write(line)
                rec = json.loads(line)
                if rec["event"] == "baseline":
                    baseline = rec
                elif rec["event"] == "result":
                    _take_result(by_id[rec["id"]], rec)
                elif rec["event"] == "done":
                    baseline["mutation_seconds"] = time.monotonic() - first_start
                if progress is not None:
                    progress({**rec, "suite": "peer"} if suite else rec)
        code = proc.wait()
        if code != RESTART or starts > len(mutants) + 1:
            break
        # a mutant hung the worker (no forks): go on where it stopped
        rfd, wfd = os.pipe()
        plan_doc = json.loads(plan_file.read_text())
        plan_doc.update(result_fd=wfd, resume=str(keep_path))
        plan_file.write_text(json.dumps(plan_doc, indent=1))
    log.close()
    if code != 0 or not baseline:
        tail = (work / f"{tag}worker.log").read_text(errors="replace").strip().splitlines()[-12:]
        raise MutationError(
            f"{plan.target}: the mutation worker failed (exit {code}); "
            f"see {work / (tag + 'worker.log')}: " + " | ".join(tail)
        )
    for name, file in baseline.get("modules", {}).items():
        if file is not None and not Path(file).resolve().is_relative_to((work / "tree").resolve()):
            raise MutationError(
                f"{plan.target}: {name} was imported from {file}, not the work copy"
            )
    for m in mutants:
        _settle(m)
        m.seeds = list(seeds)
        if suite is None:
            _robustness(m, list(seeds), gated=m.kind in GATED_KINDS or m.catalogue is not None)
    return baseline


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
