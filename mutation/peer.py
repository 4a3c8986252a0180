"""The peer comparison: the same mutants against a target's own test suite (never gated).

See mutation/README.md, "Peer comparison".
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mutation import driver, engine, peer_outcomes
from mutation.config import TargetConfig
from mutation.engine import MutationError


@dataclass(frozen=True)
class PeerJob:
    """What a peer run (:func:`run_peer`) needs: the run's target, plan and selected
    mutants, its work folder and work copy's modules, and how to run them."""

    target: str
    #: the target's spec or source tree (None or "": its default), as the run was given
    tree_or_spec: str | None
    plan: engine.Plan
    cfg: TargetConfig
    #: the mutants the run selected; the peer runs copies of them, never these
    selected: list[engine.Mutant]
    work: Path
    #: the modules the work copy holds
    modules: list[str]
    #: mutants run at a time
    jobs: int
    #: receives the peer worker's records (they carry ``"suite": "peer"``)
    progress: Callable[[dict[str, Any]], None] | None


def run_peer(job: PeerJob) -> dict[str, Any]:
    """The same mutants against the target's own tests. Never raises: errors are reported."""
    cfg = job.cfg
    if cfg.peer is None:
        return {"error": f"no peer suite is configured for {job.target} in its mutation.toml"}
    t0 = time.monotonic()
    try:
        suite = _peer_suite(job.target, job.tree_or_spec, cfg)
    except MutationError as exc:
        return {"name": cfg.peer.name, "error": str(exc)}
    # why tests cannot run on the unmutated tree, written by mutation/peer_outcomes.py
    outcomes = job.work / "peer-outcomes.jsonl"
    suite = dataclasses.replace(
        suite, pytest_args=(*suite.pytest_args, *peer_outcomes.plugin_args(outcomes))
    )
    doc = _describe(suite)
    if job.progress:
        job.progress({"event": "peer", "suite": suite.name, "tests": len(suite.tests)})
    clones = [
        dataclasses.replace(
            m, status="pending", second_status=None, killed_by=None, reason="", seconds=0.0
        )
        for m in job.selected
    ]
    try:
        settings = driver.WorkerSettings(
            modules=job.modules, jobs=job.jobs, recheck="none", progress=job.progress, suite=suite
        )
        base = driver.run_worker(job.plan, cfg, clones, job.work, settings)
    except MutationError as exc:
        doc["error"] = str(exc)
        return doc
    doc["baseline"] = {
        "tests": base.get("tests", 0),
        "failing": base.get("failing", []),
        "functions_reached": base.get("functions_reached", []),
        "not_run": peer_outcomes.summarize(peer_outcomes.read(outcomes)),
    }
    doc["timings"] = {
        "baseline": base.get("seconds", 0.0),
        "mutation": base.get("mutation_seconds", 0.0) - base.get("seconds", 0.0),
        "total": time.monotonic() - t0,
    }
    doc["results"] = {m.id: [m.status, m.killed_by] for m in clones}
    return doc


def _describe(suite: engine.PeerRun) -> dict[str, Any]:
    """The report's account of the peer suite: where it is, which tests run and why,
    which are deselected, and the plugins it brings."""
    return {
        "name": suite.name,
        "root": suite.root,
        "tests": [str(Path(t).relative_to(suite.root)) for t in suite.tests],
        "selection_reason": suite.selection_reason,
        "deselected": [list(d) for d in suite.deselect],
        "plugins": peer_outcomes.plugins_supplied(suite.pytest_args),
    }


def _peer_suite(target: str, tree_or_spec: str | None, cfg: Any) -> engine.PeerRun:
    from ctxaudit import targets

    try:
        kind = targets.get(target)
        root = kind.peer_suite(kind.resolve(tree_or_spec or None))
    except targets.TargetError as exc:
        raise MutationError(str(exc)) from None
    if root is None:
        raise MutationError(f"no peer suite for {target}")
    peer = cfg.peer
    files = sorted(
        str(p)
        for p in (root / "tests").glob("test_*.py")
        if peer.tests_matching.search(p.read_text(errors="replace"))
    )
    if not files:
        raise MutationError(f"{peer.name}: no test file under {root / 'tests'} matches")
    return engine.PeerRun(
        name=peer.name,
        root=str(root),
        tests=tuple(files),
        pytest_args=tuple(a.replace("{peer}", str(root)) for a in peer.pytest_args),
        deselect=peer.deselect,
        sys_path=(str(root),),
        selection_reason=peer.selection_reason,
    )


def merge_peer(peers: list[dict[str, Any]]) -> dict[str, Any]:
    first = dict(peers[0])
    errors = [p["error"] for p in peers if p.get("error")]
    if errors:
        first["error"] = errors[0]
    results: dict[str, Any] = {}
    for p in peers:
        results.update(p.get("results", {}))
    first["results"] = results
    first["timings"] = {
        k: sum(p.get("timings", {}).get(k, 0.0) for p in peers)
        for k in ("baseline", "mutation", "total")
    }
    return first
