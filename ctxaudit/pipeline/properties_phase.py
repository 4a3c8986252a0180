"""Phase 1 of an audit run: the property suites (and the fix audit) of every target
version, one pytest process each, ``--jobs`` at a time."""

from __future__ import annotations

import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import TYPE_CHECKING

from ctxaudit import fix_patches, procs
from ctxaudit.outcomes import COULD_NOT_CHECK, FAILS, HOLDS
from ctxaudit.pipeline.options import one_line
from ctxaudit.pipeline.progress import status

if TYPE_CHECKING:
    from ctxaudit.pipeline.run import AuditRun
    from ctxaudit.target_report import TargetReport
    from ctxaudit.targets.base import Described

#: the name of the property phase's threads (an interrupt waits for them)
POOL = "ctxaudit-properties"


def properties_phase(run: AuditRun) -> None:
    """Phase 1: the property suites, one process per target version, ``--jobs`` at a
    time (each is one pytest process: one core); a line per version as it finishes."""
    options = run.options
    pool = ThreadPoolExecutor(max_workers=max(1, options.jobs), thread_name_prefix=POOL)
    try:
        futures = {pool.submit(properties_of, run, t): t for t in options.targets}
        for fut in as_completed(futures):
            target = futures[fut]
            run.show.done(target.label)
            try:
                report = run.reports[target.label] = fut.result()
            except Exception as exc:  # ctxaudit's own error: never a verdict on the target
                run.show.line(f"{run.heads[target.label]}: COULD NOT CHECK: "
                              f"{own_error(exc, run, target)}")  # fmt: skip
                run.unchecked = True
                continue
            where = f" -> {options.out / target.label}/findings.md" if options.kept else ""
            run.show.line(f"{run.heads[target.label]}: {status(report)} ({report.elapsed_s} s)"
                          f"{where}")  # fmt: skip
            run.failed |= report.outcome == FAILS
            # a version that fails and also left something unchecked was not all checked
            run.unchecked |= (
                report.outcome == COULD_NOT_CHECK
                or bool(report.unchecked)
                or (report.outcome == HOLDS and not report.ok)
            )
    finally:  # interrupted: the versions not started never start
        pool.shutdown(wait=not procs.interrupted(), cancel_futures=True)


def own_error(exc: Exception, run: AuditRun, target: Described) -> str:
    """What kept ctxaudit from finishing a version (a report it could not write, or its
    own error), in one line. The version's report then says could-not-check, so that
    none claims a verdict this run did not reach (an earlier run's)."""
    from ctxaudit import audit

    if isinstance(exc, OSError) and exc.filename:
        where = exc.filename2 or exc.filename  # a rename into place names it second
        why = f"could not write {where} ({exc.strerror or exc})"
    else:
        why = f"ctxaudit's own error: {type(exc).__name__}: {one_line(exc)}"
    options = run.options
    report = audit.unchecked_report(target, options.profile, run.seed, 0.0, why)
    left = audit.replace_with_unchecked(report, options.out)
    return why + (f"; an earlier run's report stays: {left}" if left else "")


def properties_of(run: AuditRun, target: Described) -> TargetReport:
    """One version's property phase (and its fix audit), reused from the step cache
    while nothing it reads changed; its time on the clock."""
    from ctxaudit import audit

    options = run.options
    procs.pause(f"version-start {target.label}")
    expected = audit.previous_elapsed(options.out, target, options.profile)
    hint = f", expected ~{expected:.0f} s" if expected else ""
    t0 = time.monotonic()
    try:
        fixed_seeds = options.seeds[1:]
        key = run.steps.properties_key(target, options.profile, run.seed, fixed_seeds)
        reused = run.steps.reuse_properties(key, target, options.out)
        if reused is not None:
            fix_patches.settle(reused, options.out / target.label)
            run.clock.target(target.label).properties_reused = True
            return reused

        def progress(phase: str, t: str) -> None:
            run.show.status(target.label, f"{phase} {t}{hint}")

        report = audit.run_target(
            target, options.profile, run.seed, options.out, progress, fixed_seeds=fixed_seeds
        )
        procs.check()  # interrupted as it finished: claim nothing, cache nothing
        try:
            with fix_patches.staged(report, options.out / target.label):  # the cache keeps them
                run.steps.store_properties(key, report, options.out)
        except OSError as exc:  # the verdict stands, written; only its reuse is lost
            print(f"ctxaudit: step properties of {target.label} not cached: "
                  f"{exc.filename or ''} ({exc.strerror or exc})", file=sys.stderr)  # fmt: skip
        if report.fixed:
            run.clock.target(target.label).fixes_s = report.fixed.get("elapsed_s")
        return report
    finally:
        run.clock.target(target.label).properties_s = time.monotonic() - t0
