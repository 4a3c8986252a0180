"""The orchestration behind the public API of :mod:`mutation` (run, merge). See mutation/README.md.

Python API (what ``ctxaudit audit`` calls)::

    from mutation import run, merge
    result = run("gitreins", "0.17.1", Path("reports/gitreins-0.17.1"))
    result.gate_passed, result.counts, result.elapsed, result.mutants_per_second

    # on N machines, then once:
    run("ledger", "", out, shard=(1, 3)) ... run("ledger", "", out, shard=(3, 3))
    merge([out]) -> MutationResult (writes mutation.json / mutation.md, decides the gate)
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
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from ctxaudit import atomic
from ctxaudit.suite import commit as suite_commit
from mutation import cache as verdict_cache
from mutation import driver, engine, report
from mutation.config import ConfigError, target_config
from mutation.engine import REPO, SHARD_FORMAT, MutationError
from mutation.peer import merge_peer, run_peer

__all__ = ["MutationError", "MutationResult", "merge", "resolve_target", "run"]

P = ParamSpec("P")
R = TypeVar("R")

#: the cache entry that keeps the baseline's failing tests for a run that reused everything
BASELINE_ENTRY = "<baseline>"


@dataclass
class MutationResult:
    target: str
    version: str
    gate_passed: bool
    gate_failures: list[str]
    counts: dict[str, dict[str, int]]
    scores: dict[str, float | None]
    total: int
    elapsed: float
    mutants_per_second: float
    shard: tuple[int, int] | None = None
    report_json: Path | None = None
    report_md: Path | None = None
    shard_file: Path | None = None
    errors: list[str] = field(default_factory=list)
    #: the Hypothesis seeds of the run (pass 1 under the first; 0 = derandomized)
    seeds: list[int] = field(default_factory=lambda: [0])
    #: per kind: detected gated mutants killed robustly / seed-dependently
    robustness: dict[str, dict[str, int]] = field(default_factory=dict)
    #: verdicts reused from the cache / run
    reused: int = 0
    #: gated mutants with no verdict (ctxaudit's own error in their runs)
    in_error: list[str] = field(default_factory=list)

    @property
    def unchecked(self) -> bool:
        """The gate did not pass, and only for want of verdicts: every gated failure is
        a mutant in error, or the run reported an error of its own. Neither holds nor
        fails: ctxaudit could not check it."""
        real = [f for f in self.gate_failures if f not in self.in_error]
        return not self.gate_passed and not real

    def _rate(self) -> str:
        """Mutants a second, or seconds a mutant where a mutant takes longer than 1 s;
        no rate where no mutant ran (every verdict reused)."""
        rate = self.mutants_per_second
        if rate <= 0:
            return "no mutant ran"
        return f"{rate:.1f}/s" if rate >= 1 else f"{1 / rate:.1f} s a mutant"

    def summary_line(self) -> str:
        parts = [
            f"{k} {sum(v[s] for s in report.DETECTED)}/{sum(v.values())}"
            for k, v in self.counts.items()
            if sum(v.values())
        ]
        errs = f"; {len(self.errors)} in error, no verdict" if self.errors else ""
        gate = (
            "passed" if self.gate_passed else f"FAILED ({len(self.gate_failures)} not killed{errs})"
        )
        where = f" shard {self.shard[0]}/{self.shard[1]}" if self.shard else ""
        robust = sum(r["robust"] for r in self.robustness.values())
        dependent = sum(r["seed-dependent"] for r in self.robustness.values())
        seeds = (
            f"; seeds {','.join(map(str, self.seeds))}: {robust} robust, "
            f"{dependent} seed-dependent kills"
            if len(self.seeds) > 1
            else f"; seed {self.seeds[0]}"
        )
        return (
            f"mutation {self.target} {self.version}{where}: {self.total} mutants, "
            + ", ".join(parts)
            + f" killed{seeds}; {self.reused} verdicts reused; "
            + f"{self.elapsed:.0f} s ({self._rate()}); gate {gate}"
        )


def resolve_target(target: str, tree_or_spec: str | None) -> tuple[Path, str, str]:
    """(root that holds the package, version, folder to copy) for a target spec."""
    found = resolve(target, tree_or_spec)
    return found.root, found.version, found.copy_dir


@dataclass(frozen=True)
class Resolved:
    """A target version as the mutation run needs it."""

    root: Path  # the folder whose files its mutation.toml names
    version: str
    copy_dir: str  # what the work copy holds ("." = all of root)
    #: the interpreter the worker runs in and the worker's environment for a work
    #: copy (None: this interpreter and environment, the target's package pinned)
    runtime: driver.Runtime | None = None
    #: a developer's tree, not a registered version: a named mutant whose code is gone
    #: from it is reported, not an error (:func:`developer_tree`)
    developer: bool = False


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


def resolve(target: str, tree_or_spec: str | None) -> Resolved:
    """Ask the target (``ctxaudit.targets``) for the version a spec names."""
    from ctxaudit import targets

    try:
        kind = targets.get(target)
        found = kind.resolve(tree_or_spec or None)
    except targets.TargetError as exc:
        raise MutationError(str(exc)) from None
    if found.copy_dir is None or kind.mutation is None:
        raise MutationError(f"{target}: not a mutation target")
    from mutation.runtime import runtime_for

    return Resolved(
        found.mutation_root,
        found.version,
        found.copy_dir,
        runtime_for(kind, found, None),
        developer_tree(found),
    )


def developer_tree(found: Any) -> bool:
    """Whether a resolved target version is a developer's tree rather than a registered
    version the catalogue is written for (the rule: ``mutation/catalogue.py``).

    Registered: a version the target resolves by name, i.e. a gitreins release (the pin
    or the index) or a lightspeed-stack tag or commit of its repository (their trees'
    ``origin``). A developer's: a tree given as a path (``origin == "path"``, the only
    trees ``--since`` takes besides the ledger), and the ledger, which has no releases:
    it is this repository's code under development (``tree`` None)."""
    origin = getattr(found.tree, "origin", None)
    return origin is None or origin == "path"


def fixed_tree(
    target: str, tree_or_spec: str | None, fixes: Sequence[str], dest: Path
) -> tuple[Resolved, list[str]]:
    """``--fix``: a copy of the tree at ``dest`` with the named fixes applied
    (``ctxaudit/fixes``; ``all``: the fix of each of the target's known findings that
    has edits for this version), as the target
    version to mutate, and the fixes applied. The copy runs as the tree it was made from
    (the same environment; the work copy takes the tree's source folder's place). A fix
    that is unknown, has no edits for this version or does not apply is an error: a
    partly fixed tree is never mutated in its place."""
    from ctxaudit import fixes as fixlib
    from ctxaudit import targets

    kind = targets.get(target)
    try:
        found = kind.resolve(tree_or_spec or None)
    except targets.TargetError as exc:
        raise MutationError(str(exc)) from None
    version = kind.fix_version(found)
    every = targets.fixes()
    if list(fixes) == ["all"]:
        own = [f.id for f in kind.findings()]  # fixes are named by finding, not target
        chosen = [every[f] for f in own if f in every and _has_edits(every[f], version)]
    else:
        unknown = [f for f in fixes if f not in every]
        if unknown:
            raise MutationError(f"--fix {', '.join(unknown)}: no such fix in ctxaudit/fixes")
        chosen = [every[f] for f in dict.fromkeys(fixes)]
        no_form = [f.finding for f in chosen if not _has_edits(f, version)]
        if no_form:
            raise MutationError(
                f"--fix {', '.join(no_form)}: no form with edits for {target} {version}"
            )
    if not chosen:
        raise MutationError(f"--fix all: no fix has a form with edits for {target} {version}")
    original = resolve(target, tree_or_spec)
    try:
        inside = original.root.resolve().relative_to(found.root.resolve())
    except ValueError:
        raise MutationError(f"{target}: its mutation root is not inside its tree") from None
    got = fixlib.fixed_copy(found.root, dest, version, chosen)
    if got.failed:
        why = "; ".join(f"{fid}: {reason}" for fid, reason in got.failed.items())
        raise MutationError(f"a fix does not apply to {target} {version}: {why}")
    fixed = Resolved(
        dest / inside, original.version, original.copy_dir, original.runtime, original.developer
    )
    return fixed, got.applied


def _has_edits(fix: Any, version: str) -> bool:
    form = fix.form_for(version)
    return form is not None and not form.reason and bool(form.edits or form.patch)


def _run_ours(
    plan: engine.Plan,
    cfg: Any,
    to_run: list[engine.Mutant],
    work: Path,
    tests_arg: str,
    jobs: int,
    recheck: str,
    progress: Callable[[dict[str, Any]], None] | None,
    modules: list[str],
    seeds: Sequence[int],
    found: Resolved,
) -> dict[str, Any]:
    """The ctxaudit suite against the mutants not reused from the cache (their baseline)."""
    if not to_run:
        return {}
    return driver.run_worker(
        plan, cfg, to_run, work, tests_arg, jobs, recheck, progress, modules,
        seeds=seeds, runtime=found.runtime,
    )  # fmt: skip


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

    return str(tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"])


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


def _leave_out_unfixed(target: str, version: str, applied: Sequence[str]) -> None:
    """A target whose suites leave out the regions named in ``CTXAUDIT_FINDINGS`` (or,
    unset, its registered findings' for the version) leaves out all but the fixed ones."""
    from ctxaudit import targets

    kind = targets.get(target)
    if not kind.excludes_known:
        return  # its suites find what reproduces on the unmutated (fixed) copy themselves
    given = os.environ.get("CTXAUDIT_FINDINGS")
    if given is None:
        ids = kind.left_out(version)
    else:
        ids = [i.strip() for i in given.split(",") if i.strip() not in ("", "none")]
    os.environ["CTXAUDIT_FINDINGS"] = ",".join(i for i in ids if i not in applied) or "none"


@_restores_env("CTXAUDIT_FINDINGS")  # --fix: the fixed findings' regions are checked
def run(
    target: str,
    tree_or_spec: str | None,
    out_dir: Path,
    shard: tuple[int, int] | None = None,
    progress: Callable[[dict[str, Any]], None] | None = None,
    *,
    jobs: int = 2,
    recheck: str = "gated",
    coverage: bool = True,
    other_sample: float = 1.0,
    peer: bool = False,
    only: Sequence[str] = (),
    seeds: Sequence[int] = (0, 1, 2),
    cache: bool = True,
    fixes: Sequence[str] = (),
    tests: Sequence[str] = (),
) -> MutationResult:
    """Mutate ``target``, run its suite against every mutant, write reports into ``out_dir``.

    With ``shard=(i, n)`` only the i-th of n deterministic shards runs and
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
    if not 0.0 < other_sample <= 1.0:
        raise MutationError(f"bad other_sample {other_sample}: need 0 < f <= 1")
    if shard is not None:
        i, n = shard
        if not (n >= 1 and 1 <= i <= n):
            raise MutationError(f"bad shard {i}/{n}: need 1 <= I <= N")
    if recheck not in ("gated", "survivors", "all", "none"):
        raise MutationError(f"bad recheck {recheck!r}: gated, survivors, all or none")
    seeds = [int(x) for x in seeds]
    if not seeds or len(set(seeds)) != len(seeds) or min(seeds) < 0:
        raise MutationError(f"bad seeds {seeds}: need distinct seeds >= 0")
    t0 = time.monotonic()
    try:
        cfg = target_config(target)
    except ConfigError as exc:
        raise MutationError(str(exc)) from None
    if tests:
        cfg = replace(cfg, tests=_part_of_suite(cfg.tests, tests))
    # a target may cap the share of `other` mutants (each costs a run of its service)
    other_sample = min(other_sample, cfg.other_sample_max)
    i, n = shard or (1, 1)
    fixed_dir = engine.WORK / f"{target}-fixed-{i}of{n}.{os.getpid()}"
    applied: list[str] = []
    if fixes:
        shutil.rmtree(fixed_dir, ignore_errors=True)
        found, applied = fixed_tree(target, tree_or_spec, fixes, fixed_dir / "tree")
        _leave_out_unfixed(target, found.version, applied)
    else:
        found = resolve(target, tree_or_spec)
    root, version, copy_dir = found.root, found.version, found.copy_dir
    plan = engine.build_plan(target, cfg, root, version, developer=found.developer)
    planned = [m for m in plan.mutants if engine.sampled(m, other_sample)]
    unsampled = len(plan.mutants) - len(planned)
    selected = [m for m in planned if engine.shard_of(m.id, n) == i - 1]
    if only:
        selected = [m for m in selected if any(_matches(m, p) for p in only)]
        if not selected:
            raise MutationError(f"no mutant id matches {' or '.join(only)}")
    # one work folder per run, so two runs of the same target never share one; it is
    # removed after a run that finished (kept on an error, or with CTXAUDIT_KEEP_WORK=1)
    work = engine.WORK / f"{target}-{version}-{i}of{n}.{os.getpid()}"
    vcache = None
    reused: list[engine.Mutant] = []
    if cache:
        vcache = verdict_cache.VerdictCache(
            # a target run in its own environment: the environment's key too
            target=verdict_cache.target_digest(root, copy_dir)
            + (f"+{found.runtime.key}" if found.runtime else ""),
            suite=verdict_cache.suite_digest(),
            profile=verdict_cache.run_profile(recheck, tests=tuple(tests)),
            seeds=tuple(seeds),
        )
        reused = vcache.fill(selected)
    reused_ids = {m.id for m in reused}
    to_run = [m for m in selected if m.id not in reused_ids]
    # the peer runs every selected mutant, so its work copy needs them all
    in_tree = selected if peer else to_run
    # nothing to run: no work copy (writing and compiling it is most of a cached run)
    modules: list[str] = []
    if in_tree:
        modules = engine.write_work_tree(
            plan, {m.id for m in in_tree}, work, copy_dir, compile_here=found.runtime is None
        )
    else:
        work.mkdir(parents=True, exist_ok=True)
    setup = time.monotonic() - t0
    if progress:
        progress(
            {
                "event": "plan",
                "target": target,
                "version": version,
                "mutants": len(selected),
                "all": len(plan.mutants),
            }
        )
    tests_arg = str(work / "tree")
    baseline: dict[str, Any] = {}
    if progress and reused:
        progress({"event": "cache", "reused": len(reused), "run": len(to_run)})
    # the peer runs beside the suite's own mutant runs: it mostly waits on its tests'
    # sleeps and subprocesses, so the two together take little more than the longer one
    peer_box: dict[str, Any] = {}
    peer_thread = None
    if peer and selected:

        def _peer() -> None:
            try:
                peer_box["doc"] = run_peer(
                    target, tree_or_spec, plan, cfg, selected, work, modules, jobs, progress
                )
            except Exception as exc:  # run_peer reports its own errors; anything else too
                peer_box["doc"] = {"error": f"the peer run failed: {exc!r}"}

        peer_thread = threading.Thread(target=_peer, name="mutation-peer", daemon=True)
        peer_thread.start()
    try:
        baseline = _run_ours(
            plan, cfg, to_run, work, tests_arg, jobs, recheck, progress, modules, seeds, found
        )
    finally:
        if peer_thread is not None:
            peer_thread.join()
    if to_run:
        if vcache is not None:
            vcache.store(to_run)
            vcache.put(BASELINE_ENTRY, {"failing": baseline.get("failing", [])})
    elif vcache is not None and selected:
        baseline = {"failing": (vcache.get(BASELINE_ENTRY) or {}).get("failing", [])}
    peer_doc = peer_box.get("doc")
    cov = None
    if coverage and i == 1:
        limit = engine.coverage_timeout(baseline.get("seconds"))
        cov = engine.branch_coverage(plan, cfg, str(root), work, found.runtime, limit)
    chosen = {m.id for m in selected}
    for fp in plan.files.values():
        for m, mu in fp.mutations:
            if m.id in chosen and m.status not in report.DETECTED:
                m.diff = engine.mutant_diff(fp, mu)
    elapsed = time.monotonic() - t0
    doc = {
        "format": SHARD_FORMAT,
        "target": target,
        "version": version,
        "root": str(root),
        "shard": [i, n],
        "total_mutants": len(planned),
        "other_sample": other_sample,
        "other_not_sampled": unsampled,
        "only": list(only),
        "tests": list(tests),
        "seeds": seeds,
        # what reruns one mutant: the spec and its option, the fixes as asked for
        "rerun": _rerun_base(target, tree_or_spec, fixes),
        # the fixes applied to the mutated tree (empty: the released tree)
        "fixes": applied,
        "cache": {
            "used": vcache is not None,
            "reused": len(reused),
            "ran": len(to_run),
            "target_digest": vcache.target if vcache else None,
            "suite_digest": vcache.suite if vcache else None,
        },
        # the ctxaudit suites leave the regions of these known findings out (the audit
        # sets it to the findings that reproduce on this version)
        "findings_excluded": os.environ.get("CTXAUDIT_FINDINGS"),
        "suite": suite_commit(),
        "plan_digest": plan.digest,
        "sources": {p: fp.source for p, fp in plan.files.items()},
        "mutants": [engine.mutant_to_json(m) for m in selected],
        "baseline": baseline,
        "coverage": cov,
        "not_applicable": plan.not_applicable,
        # named mutants whose code is gone from a developer's tree (not run, not gated)
        "no_longer_applies": plan.no_longer_applies,
        "excluded": plan.excluded,
        "deselected": [list(d) for d in cfg.deselect],
        "peer": peer_doc,
        "timings": {
            "setup": setup,
            "baseline": baseline.get("seconds", 0.0),
            "mutation": baseline.get("mutation_seconds", 0.0) - baseline.get("seconds", 0.0),
            "total": elapsed,
        },
    }
    # the results stay in the work folder until the reports are written: a report that
    # cannot be written leaves them there (with the worker's results.jsonl)
    if work.exists():
        (work / "result-doc.json").write_text(json.dumps(doc) + "\n")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if shard is not None:
        path = out_dir / f"mutation-shard-{i}-of-{n}.json"
        atomic.write_text(path, json.dumps(doc) + "\n")
        res = _result(_finish(doc, [doc]), None, None)
        res.shard = (i, n)
        res.shard_file = path
    else:
        final = _finish(doc, [doc])
        js, md = report.write_reports(final, out_dir)
        res = _result(final, js, md)
    if not os.environ.get("CTXAUDIT_KEEP_WORK"):
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(fixed_dir, ignore_errors=True)
    return res


def _finish(first: dict[str, Any], docs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    mutants = [m for d in docs for m in d["mutants"]]
    timings = {
        k: sum(d["timings"].get(k, 0.0) for d in docs) for k in ("setup", "baseline", "mutation")
    }
    timings["total"] = max(d["timings"].get("total", 0.0) for d in docs)
    timings["cpu_total"] = sum(d["timings"].get("total", 0.0) for d in docs)
    cov = next((d["coverage"] for d in docs if d.get("coverage")), None)
    peers = [d["peer"] for d in docs if d.get("peer")]
    failing = sorted({t for d in docs for t in d.get("baseline", {}).get("failing", [])})
    final = {
        **{
            k: first[k]
            for k in ("target", "version", "root", "sources", "not_applicable", "excluded")
        },
        # the same in every shard of one plan
        **{
            k: first.get(k)
            for k in (
                "other_sample",
                "other_not_sampled",
                "only",
                "tests",
                "deselected",
                "findings_excluded",
                "seeds",
                "fixes",
                "no_longer_applies",
                "rerun",
            )
            if first.get(k) is not None
        },
        "mutants": mutants,
        "coverage": cov,
        "timings": timings,
        "baseline": {"failing": failing},
        "shards": len(docs),
        "peer": merge_peer(peers) if peers else None,
        "cache": {
            "reused": sum((d.get("cache") or {}).get("reused", 0) for d in docs),
            "ran": sum((d.get("cache") or {}).get("ran", len(d["mutants"])) for d in docs),
        },
    }
    equivalents = engine.load_equivalents(target=first["target"])
    return report.apply_gate(final, equivalents)


def _result(doc: dict[str, Any], js: Path | None, md: Path | None) -> MutationResult:
    counts = report.kinds_counts(doc)
    scores = {k: v["score"] for k, v in report.summary(doc["mutants"], "kind").items()}
    total = len(doc["mutants"])
    elapsed = doc["timings"]["total"]
    mut = doc["timings"].get("mutation", 0.0)
    return MutationResult(
        target=doc["target"],
        version=doc["version"],
        gate_passed=doc["gate"]["passed"],
        gate_failures=list(doc["gate"]["failures"]),
        in_error=list(doc["gate"].get("in_error") or []),
        counts=counts,
        scores=scores,
        total=total,
        elapsed=elapsed,
        mutants_per_second=(total / mut) if mut > 0 else 0.0,
        report_json=js,
        report_md=md,
        seeds=list(doc.get("seeds", [0])),
        robustness=report.robustness(doc["mutants"]),
        reused=int((doc.get("cache") or {}).get("reused", 0)),
        errors=list(doc.get("errors") or []),
    )


def merge(paths: Sequence[Path], out_dir: Path | None = None) -> MutationResult:
    """Combine shard files (or folders holding them) into one report and one gate."""
    files: list[Path] = []
    for p in map(Path, paths):
        files += sorted(p.glob("mutation-shard-*-of-*.json")) if p.is_dir() else [p]
    if not files:
        raise MutationError("merge: no shard files (mutation-shard-I-of-N.json) found")
    docs = []
    for f in files:
        try:
            d = json.loads(f.read_text())
        except (OSError, ValueError) as exc:
            raise MutationError(f"merge: cannot read {f}: {exc}") from None
        if d.get("format") != SHARD_FORMAT:
            raise MutationError(f"merge: {f} is not a shard result")
        docs.append(d)
    first = docs[0]
    n = first["shard"][1]
    for d in docs:
        same = (d["target"], d["version"], d["shard"][1], d["plan_digest"])
        if same != (first["target"], first["version"], n, first["plan_digest"]):
            raise MutationError(
                "merge: shards come from different runs (target, version, N or mutants differ)"
            )
    got = sorted(d["shard"][0] for d in docs)
    if got != list(range(1, n + 1)):
        raise MutationError(f"merge: need shards 1..{n} exactly once, got {got}")
    ids = [m["id"] for d in docs for m in d["mutants"]]
    if len(ids) != len(set(ids)) or len(ids) != first["total_mutants"]:
        raise MutationError(
            f"merge: the shards hold {len(ids)} mutants, the plan has {first['total_mutants']}"
        )
    final = _finish(first, docs)
    out = Path(out_dir) if out_dir else files[0].parent
    js, md = report.write_reports(final, out)
    return _result(final, js, md)


def result_as_dict(res: MutationResult) -> dict[str, Any]:
    d = asdict(res)
    for k in ("report_json", "report_md", "shard_file"):
        d[k] = str(d[k]) if d[k] else None
    return d
