"""The orchestration behind the public API of :mod:`mutation` (run, merge). See mutation/README.md.

Python API (what ``ctxaudit audit`` calls)::

    from mutation import run, merge, RunOptions
    result = run("gitreins", "0.17.1", Path("reports/gitreins-0.17.1"))
    result.gate_passed, result.counts, result.elapsed, result.mutants_per_second

    # on N machines, then once:
    run("ledger", "", out, RunOptions(shard=(1, 3))) ... RunOptions(shard=(3, 3))
    merge([out]) -> MutationResult (writes mutation.json / mutation.md, decides the gate)

A run is a sequence of named steps, each a function below: :func:`validate` the options,
:func:`select` the tree and its mutants, :func:`cached_verdicts`, :func:`write_work_copy`,
:func:`announce`, :func:`run_with_peer`, :func:`store_verdicts`, then :func:`shard_doc`
and :func:`write_report`. ``--fix``'s tree is :mod:`mutation.fixed_tree`'s, ``merge`` is
:mod:`mutation.merging`'s.
"""

from __future__ import annotations

import fnmatch
import functools
import json
import os
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from ctxaudit import atomic, procs
from ctxaudit.suite import commit as suite_commit
from mutation import cache as verdict_cache
from mutation import driver, engine, report, suite_coverage
from mutation.config import ConfigError, TargetConfig, target_config
from mutation.engine import REPO, SHARD_FORMAT, MutationError
from mutation.fixed_tree import fixed_tree, leave_out_unfixed
from mutation.merging import finish, merge
from mutation.options import RECHECK_MODES, RunOptions
from mutation.peer import PeerJob, run_peer
from mutation.resolve import Resolved, developer_tree, resolve, resolve_target
from mutation.result import MutationResult, result_as_dict, result_from
from mutation.work_folders import keep, sweep_stale_work

__all__ = [
    "MutationError",
    "MutationResult",
    "RunOptions",
    "developer_tree",
    "fixed_tree",
    "merge",
    "resolve",
    "resolve_target",
    "result_as_dict",
    "run",
]

P = ParamSpec("P")
R = TypeVar("R")

#: the cache entry that keeps the baseline's failing tests for a run that reused everything
BASELINE_ENTRY = "<baseline>"


def _rerun_base(target: str, tree_or_spec: str | None, fixes: Sequence[str]) -> list[str]:
    """The ``python -m mutation run`` arguments that name this run's tree again: the
    target, its spec under the target's option (a path as reports show it), the fixes."""
    from ctxaudit import targets
    from mutation.report import shown_path

    args = ["--target", target]
    scope = targets.get(target).mutation
    if tree_or_spec and scope is not None and scope.spec_option:
        spec = shown_path(tree_or_spec) if Path(tree_or_spec).exists() else tree_or_spec
        args += [scope.spec_option, spec]
    for fid in fixes:
        args += ["--fix", fid]
    return args


def _part_of_suite(suite: Sequence[str], tests: Sequence[str]) -> tuple[str, ...]:
    """``tests`` checked to lie inside the configured ``suite`` (a file or folder of it,
    or a node id in one): a mutation run never runs tests the target's scope does not
    name."""
    outside = [
        t
        for t in tests
        if not any(
            t == s or t.startswith(s.rstrip("/") + ("/" if not s.endswith(".py") else "::"))
            for s in suite
        )
    ]
    if outside:
        raise MutationError(
            f"--tests {', '.join(outside)}: not part of the target's suite ({', '.join(suite)})"
        )
    return tuple(tests)


def _matches(m: engine.Mutant, pattern: str) -> bool:
    """``--only``: the stable id, or for a catalogued mutant also
    ``<file>:<function>:<kind>:catalogue:<entry>`` (so ``<file>:<function>:*`` takes the
    function's catalogued mutants too)."""
    if fnmatch.fnmatchcase(m.id, pattern):
        return True
    alias = f"{m.file}:{m.function}:{m.kind}:catalogue:{m.catalogue}"
    return m.catalogue is not None and fnmatch.fnmatchcase(alias, pattern)


def _project_version() -> str:
    import tomllib

    return str(
        tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    )


def _restores_env(name: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """The environment variable ``name`` is as it was after the call, whatever it did."""

    def wrap(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def call(*args: P.args, **kw: P.kwargs) -> R:
            saved = os.environ.get(name)
            try:
                return fn(*args, **kw)
            finally:
                if saved is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = saved

        return call

    return wrap


@dataclass(frozen=True)
class Selection:
    """What a run mutates: the tree, its plan and the mutants chosen to run."""

    found: Resolved
    #: the fixes applied to the tree (empty: the released tree)
    applied: list[str]
    plan: engine.Plan
    #: the plan's mutants after the ``other`` sample
    planned: int
    #: the ``other`` mutants the sample left out
    unsampled: int
    #: this shard's sampled mutants that ``only`` takes
    selected: list[engine.Mutant]


@dataclass(frozen=True)
class Cached:
    """The selected mutants' verdicts found in the cache, and those left to run."""

    vcache: verdict_cache.VerdictCache | None
    reused: list[engine.Mutant]
    to_run: list[engine.Mutant]


@dataclass(frozen=True)
class Run:
    """One run, as the steps after :func:`select` see it."""

    target: str
    tree_or_spec: str | None
    options: RunOptions
    cfg: TargetConfig
    sel: Selection
    #: the run's own work folder: the work copy, the worker's files and logs
    work: Path


@_restores_env("CTXAUDIT_FINDINGS")  # --fix: the fixed findings' regions are checked
def run(
    target: str, tree_or_spec: str | None, out_dir: Path, options: RunOptions | None = None
) -> MutationResult:
    """Mutate ``target``, run its suite against every mutant, write reports into ``out_dir``.

    ``options`` (:class:`RunOptions`, its defaults when None) says how. With
    ``shard=(i, n)`` only the i-th of n deterministic shards runs and
    ``out_dir/mutation-shard-i-of-n.json`` is written; :func:`merge` makes the report.
    ``other_sample`` < 1 runs only that fraction of the ``other`` mutants (chosen by a
    hash of their id, so the same ones every time); removed-write, wrong-comparison and
    catalogued mutants always all run.
    ``peer=True`` also runs the same mutants against the target's own test suite (for
    gitreins: the tests of its sdist, see ``[gitreins.peer]`` in its mutation.toml) and reports
    both side by side; the peer's result never decides the gate.
    ``seeds``: pass 1 runs under the first; each detected gated mutant whose killer uses
    Hypothesis runs again under the others, and only robust kills pass the gate (seed 0 is
    the ``mutation`` profile's derandomized examples).
    ``cache``: reuse verdicts stored under ``.cache/mutation-verdicts/`` (see
    ``mutation/cache.py``) and store the new ones.
    ``fixes``: mutate a copy of the tree with these fixes applied (:func:`fixed_tree`;
    ``["all"]``: every fix for the version), where the properties are checked over the
    regions the fixed findings carved out of the released tree; the report says which.
    ``tests``: run only this part of the target's suite (test files or node ids inside the
    configured ``tests``), e.g. the seed-free programs for a quick check of the named
    mutants; a survivor then only says that part did not kill it. The report says so.
    """
    t0 = time.monotonic()
    options, cfg = validate(target, options or RunOptions())
    i, n = options.shard or (1, 1)
    sweep_stale_work()
    fixed_dir = engine.WORK / f"{target}-fixed-{i}of{n}.{os.getpid()}"
    # one work folder per run, so two runs of the same target never share one; it is
    # removed after a run that finished and after an interrupted one (SIGINT, SIGTERM),
    # kept on an error or with CTXAUDIT_KEEP_WORK=1 (marked, so no sweep removes it)
    made = [fixed_dir]
    try:
        with procs.sigterm_interrupts():
            sel = select(target, tree_or_spec, cfg, options, fixed_dir)
            work = engine.WORK / f"{target}-{sel.found.version}-{i}of{n}.{os.getpid()}"
            made.append(work)
            r = Run(target, tree_or_spec, options, cfg, sel, work)
            cached = cached_verdicts(r)
            modules = write_work_copy(r, cached.to_run)
            setup = time.monotonic() - t0
            announce(r, cached)
            baseline, peer_doc = run_with_peer(r, cached.to_run, modules)
            baseline = store_verdicts(r, cached, baseline)
            doc = shard_doc(r, cached, baseline, peer_doc, (t0, setup))
            res = write_report(doc, Path(out_dir), work, options.shard)
    except KeyboardInterrupt:
        for folder in made:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    except BaseException as exc:
        keep(made, f"the run failed: {type(exc).__name__}: {exc}")
        raise
    if os.environ.get("CTXAUDIT_KEEP_WORK"):
        keep(made, "CTXAUDIT_KEEP_WORK is set")
    else:
        for folder in made:
            shutil.rmtree(folder, ignore_errors=True)
    return res


def validate(target: str, options: RunOptions) -> tuple[RunOptions, TargetConfig]:
    """Check the options, and read the target's mutation config. Returns the options as
    the run uses them (the seeds as ints; ``other_sample`` capped by the target) and the
    config (its tests narrowed to ``options.tests``)."""
    if not 0.0 < options.other_sample <= 1.0:
        raise MutationError(f"bad other_sample {options.other_sample}: need 0 < f <= 1")
    if options.shard is not None:
        i, n = options.shard
        if not (n >= 1 and 1 <= i <= n):
            raise MutationError(f"bad shard {i}/{n}: need 1 <= I <= N")
    if options.recheck not in RECHECK_MODES:
        raise MutationError(f"bad recheck {options.recheck!r}: gated, survivors, all or none")
    seeds = [int(x) for x in options.seeds]
    if not seeds or len(set(seeds)) != len(seeds) or min(seeds) < 0:
        raise MutationError(f"bad seeds {seeds}: need distinct seeds >= 0")
    try:
        cfg = target_config(target)
    except ConfigError as exc:
        raise MutationError(str(exc)) from None
    if options.tests:
        cfg = replace(cfg, tests=_part_of_suite(cfg.tests, options.tests))
    # a target may cap the share of `other` mutants (each costs a run of its service)
    other_sample = min(options.other_sample, cfg.other_sample_max)
    return replace(options, seeds=seeds, other_sample=other_sample), cfg


def select(
    target: str, tree_or_spec: str | None, cfg: TargetConfig, options: RunOptions, fixed_dir: Path
) -> Selection:
    """The tree to mutate (with ``fixes``: a fixed copy in ``fixed_dir``, and the fixed
    findings' regions no longer left out), its plan, and the mutants this run takes from
    it: the ``other`` sample, this shard's part, the ones ``only`` matches."""
    applied: list[str] = []
    if options.fixes:
        shutil.rmtree(fixed_dir, ignore_errors=True)
        found, applied = fixed_tree(target, tree_or_spec, options.fixes, fixed_dir / "tree")
        leave_out_unfixed(target, found.version, applied)
    else:
        found = resolve(target, tree_or_spec)
    plan = engine.build_plan(target, cfg, found.root, found.version, developer=found.developer)
    planned = [m for m in plan.mutants if engine.sampled(m, options.other_sample)]
    i, n = options.shard or (1, 1)
    selected = [m for m in planned if engine.shard_of(m.id, n) == i - 1]
    if options.only:
        selected = [m for m in selected if any(_matches(m, p) for p in options.only)]
        if not selected:
            raise MutationError(f"no mutant id matches {' or '.join(options.only)}")
    unsampled = len(plan.mutants) - len(planned)
    return Selection(found, applied, plan, len(planned), unsampled, selected)


def cached_verdicts(r: Run) -> Cached:
    """The selected mutants' verdicts stored by an earlier run with the same key (none
    without ``cache``), and the mutants left to run."""
    vcache = None
    reused: list[engine.Mutant] = []
    found = r.sel.found
    if r.options.cache:
        vcache = verdict_cache.VerdictCache(
            # a target run in its own environment: the environment's key too
            target=verdict_cache.target_digest(found.root, found.copy_dir)
            + (f"+{found.runtime.key}" if found.runtime else ""),
            suite=verdict_cache.suite_digest(),
            profile=verdict_cache.run_profile(r.options.recheck, tests=tuple(r.options.tests)),
            seeds=tuple(r.options.seeds),
        )
        reused = vcache.fill(r.sel.selected)
    reused_ids = {m.id for m in reused}
    to_run = [m for m in r.sel.selected if m.id not in reused_ids]
    return Cached(vcache, reused, to_run)


def write_work_copy(r: Run, to_run: list[engine.Mutant]) -> list[str]:
    """The trampolined work copy of the tree holding the mutants that run (with a peer:
    every selected one, as the peer runs them all); its modules. With nothing to run
    there is no work copy, only the work folder: writing and compiling the copy is most
    of a cached run."""
    in_tree = r.sel.selected if r.options.peer else to_run
    if not in_tree:
        r.work.mkdir(parents=True, exist_ok=True)
        return []
    found = r.sel.found
    return engine.write_work_tree(
        r.sel.plan,
        {m.id for m in in_tree},
        r.work,
        found.copy_dir,
        compile_here=found.runtime is None,
    )


def announce(r: Run, cached: Cached) -> None:
    """Tell the progress callback what the run takes on: the plan's mutants and the
    selected ones, then how many verdicts the cache gave."""
    progress = r.options.progress
    if not progress:
        return
    progress(
        {
            "event": "plan",
            "target": r.target,
            "version": r.sel.found.version,
            "mutants": len(r.sel.selected),
            "all": len(r.sel.plan.mutants),
        }
    )
    if cached.reused:
        progress({"event": "cache", "reused": len(cached.reused), "run": len(cached.to_run)})


def run_with_peer(
    r: Run, to_run: list[engine.Mutant], modules: list[str]
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Our suite against the mutants left to run and, with ``peer``, the target's own
    tests against every selected mutant in a thread beside it: the peer mostly waits on
    its tests' sleeps and subprocesses, so the two together take little more than the
    longer one. Returns our suite's baseline ({} when nothing ran) and the peer's
    document (None without a peer)."""
    options = r.options
    peer_box: dict[str, Any] = {}
    peer_thread = None
    if options.peer and r.sel.selected:

        def _peer() -> None:
            try:
                job = PeerJob(
                    target=r.target,
                    tree_or_spec=r.tree_or_spec,
                    plan=r.sel.plan,
                    cfg=r.cfg,
                    selected=r.sel.selected,
                    work=r.work,
                    modules=modules,
                    jobs=options.jobs,
                    progress=options.progress,
                )
                peer_box["doc"] = run_peer(job)
            except Exception as exc:  # run_peer reports its own errors; anything else too
                peer_box["doc"] = {"error": f"the peer run failed: {exc!r}"}

        peer_thread = threading.Thread(target=_peer, name="mutation-peer", daemon=True)
        peer_thread.start()
    try:
        baseline = _run_ours(r, to_run, modules)
    finally:
        if peer_thread is not None:
            peer_thread.join()
    return baseline, peer_box.get("doc")


def _run_ours(r: Run, to_run: list[engine.Mutant], modules: list[str]) -> dict[str, Any]:
    """The ctxaudit suite against the mutants not reused from the cache (their baseline)."""
    if not to_run:
        return {}
    options = r.options
    settings = driver.WorkerSettings(
        modules=modules,
        jobs=options.jobs,
        recheck=options.recheck,
        seeds=options.seeds,
        progress=options.progress,
        runtime=r.sel.found.runtime,
        tests_root=str(r.work / "tree"),
    )
    return driver.run_worker(r.sel.plan, r.cfg, to_run, r.work, settings)


def store_verdicts(r: Run, cached: Cached, baseline: dict[str, Any]) -> dict[str, Any]:
    """Store the new verdicts and the baseline's failing tests in the cache. Returns the
    baseline; for a run that reused every verdict, the failing tests the cache kept."""
    vcache = cached.vcache
    if vcache is None:
        return baseline
    if cached.to_run:
        vcache.store(cached.to_run)
        vcache.put(BASELINE_ENTRY, {"failing": baseline.get("failing", [])})
    elif r.sel.selected:
        baseline = {"failing": (vcache.get(BASELINE_ENTRY) or {}).get("failing", [])}
    return baseline


def shard_doc(
    r: Run,
    cached: Cached,
    baseline: dict[str, Any],
    peer_doc: dict[str, Any] | None,
    clock: tuple[float, float],
) -> dict[str, Any]:
    """The run's result document (a shard's, the input of :func:`finish`): the branch
    coverage (the first shard, with ``coverage``), the survivors' diffs, the mutants and
    what the run was. ``clock``: the run's start and its setup time."""
    options, sel, found = r.options, r.sel, r.sel.found
    i, n = options.shard or (1, 1)
    cov = None
    if options.coverage and i == 1:
        limit = suite_coverage.coverage_timeout(baseline.get("seconds"))
        cov = suite_coverage.branch_coverage(
            sel.plan, r.cfg, str(found.root), r.work, found.runtime, limit
        )
    chosen = {m.id for m in sel.selected}
    for fp in sel.plan.files.values():
        for m, mu in fp.mutations:
            if m.id in chosen and m.status not in report.DETECTED:
                m.diff = engine.mutant_diff(fp, mu)
    t0, setup = clock
    elapsed = time.monotonic() - t0
    vcache = cached.vcache
    return {
        "format": SHARD_FORMAT,
        "target": r.target,
        "version": found.version,
        "root": str(found.root),
        "shard": [i, n],
        "total_mutants": sel.planned,
        "other_sample": options.other_sample,
        "other_not_sampled": sel.unsampled,
        "only": list(options.only),
        "tests": list(options.tests),
        "seeds": list(options.seeds),
        # what reruns one mutant: the spec and its option, the fixes as asked for
        "rerun": _rerun_base(r.target, r.tree_or_spec, options.fixes),
        # the fixes applied to the mutated tree (empty: the released tree)
        "fixes": sel.applied,
        "cache": {
            "used": vcache is not None,
            "reused": len(cached.reused),
            "ran": len(cached.to_run),
            "target_digest": vcache.target if vcache else None,
            "suite_digest": vcache.suite if vcache else None,
        },
        # the ctxaudit suites leave the regions of these known findings out (the audit
        # sets it to the findings that reproduce on this version)
        "findings_excluded": os.environ.get("CTXAUDIT_FINDINGS"),
        "suite": suite_commit(),
        "plan_digest": sel.plan.digest,
        "sources": {p: fp.source for p, fp in sel.plan.files.items()},
        "mutants": [engine.mutant_to_json(m) for m in sel.selected],
        "baseline": baseline,
        "coverage": cov,
        "not_applicable": sel.plan.not_applicable,
        # named mutants whose code is gone from a developer's tree (not run, not gated)
        "no_longer_applies": sel.plan.no_longer_applies,
        "excluded": sel.plan.excluded,
        "deselected": [list(d) for d in r.cfg.deselect],
        "peer": peer_doc,
        "timings": {
            "setup": setup,
            "baseline": baseline.get("seconds", 0.0),
            "mutation": baseline.get("mutation_seconds", 0.0) - baseline.get("seconds", 0.0),
            "total": elapsed,
        },
    }


def write_report(
    doc: dict[str, Any], out_dir: Path, work: Path, shard: tuple[int, int] | None
) -> MutationResult:
    """Write the run's result: with ``shard``, the shard file for :func:`merge`; without,
    ``mutation.json`` and ``mutation.md`` with the gate decided. The document is kept in
    the work folder first, so a report that cannot be written leaves the results there
    (with the worker's results.jsonl)."""
    if work.exists():
        (work / "result-doc.json").write_text(json.dumps(doc) + "\n")
    out_dir.mkdir(parents=True, exist_ok=True)
    if shard is not None:
        i, n = shard
        path = out_dir / f"mutation-shard-{i}-of-{n}.json"
        atomic.write_text(path, json.dumps(doc) + "\n")
        res = result_from(finish(doc, [doc]), None, None)
        res.shard = (i, n)
        res.shard_file = path
        return res
    final = finish(doc, [doc])
    js, md = report.write_reports(final, out_dir)
    return result_from(final, js, md)
