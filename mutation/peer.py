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

from ctxaudit.own_tests import select_tests as select_tests  # re-exported
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
        suite, runtime = _peer_suite(job.target, job.tree_or_spec, cfg)
    except MutationError as exc:
        return {"name": cfg.peer.name, "error": str(exc)}
    # why tests cannot run on the unmutated tree, written by mutation/peer_outcomes.py
    outcomes = job.work / "peer-outcomes.jsonl"
    suite = dataclasses.replace(
        suite, pytest_args=(*suite.pytest_args, *peer_outcomes.plugin_args(outcomes))
    )
    doc = _describe(suite)
    doc["label"] = cfg.peer.label
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
            modules=job.modules,
            jobs=job.jobs,
            recheck="none",
            progress=job.progress,
            suite=suite,
            runtime=runtime,
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
        "conftests": _conftests(Path(suite.root), suite.tests),
    }


def _conftests(root: Path, tests: tuple[str, ...]) -> list[str]:
    """The suite's own ``conftest.py`` files pytest loads for ``tests`` (those in their
    folders up to ``root``), relative to ``root``."""
    found = {
        c
        for t in tests
        for d in Path(t).parents
        if d.is_relative_to(root)
        for c in [d / "conftest.py"]
        if c.is_file()
    }
    return sorted(str(c.relative_to(root)) for c in found)


def _peer_runtime(kind: Any, target: str, tree_or_spec: str | None) -> driver.Runtime | None:
    """Where the peer's worker runs: None (this interpreter) for a target whose suites run
    here; else the target's peer environment (``peer_process``: its own tests'
    dependencies too), laid out as ``mutation.runtime`` lays out the suites' (the work
    copy first on the path, in place of the tree)."""
    from mutation.runtime import runtime_for

    found = kind.resolve(tree_or_spec or None)

    class _Peer:  # the target as runtime_for asks it, its peer process as the suites'
        name = kind.name

        @staticmethod
        def suite_process(described: Any, tmp: Path) -> tuple[str, dict[str, str]] | None:
            if kind.suite_process(described, tmp) is None:
                return None
            peer_process = getattr(kind, "peer_process", None)
            if peer_process is None:
                raise MutationError(
                    f"{target}: its suites run in their own environment and it names none "
                    "for its peer suite (peer_process)"
                )
            got: tuple[str, dict[str, str]] = peer_process(described, tmp)
            return got

    return runtime_for(_Peer(), found, None)


def _peer_suite(
    target: str, tree_or_spec: str | None, cfg: Any
) -> tuple[engine.PeerRun, driver.Runtime | None]:
    from ctxaudit import targets

    try:
        kind = targets.get(target)
        root = kind.peer_suite(kind.resolve(tree_or_spec or None))
        runtime = None if root is None else _peer_runtime(kind, target, tree_or_spec)
    except targets.TargetError as exc:
        raise MutationError(str(exc)) from None
    if root is None:
        raise MutationError(f"no peer suite for {target}")
    peer = cfg.peer
    files = select_tests(root, peer)
    if not files:
        raise MutationError(
            f"{peer.name}: no test file under {root} matches ({', '.join(peer.tests)})"
        )
    suite = engine.PeerRun(
        name=peer.name,
        root=str(root),
        tests=tuple(files),
        pytest_args=tuple(a.replace("{peer}", str(root)) for a in peer.pytest_args),
        deselect=peer.deselect,
        sys_path=(str(root),),
        selection_reason=peer.selection_reason,
    )
    return suite, runtime


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
