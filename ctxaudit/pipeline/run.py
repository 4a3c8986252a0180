"""One audit run, start to end: the interrupt handling around it, its first line, and
its phases in order: the properties of every version (:mod:`.properties_phase`), the
baseline's verdict (:mod:`.baseline`), mutation (:mod:`.mutation_phase`), then the
reports over every version and the exit code (:mod:`.finish`)."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ctxaudit import paths, procs
from ctxaudit.pipeline.baseline import judged_by_baseline
from ctxaudit.pipeline.finish import finish, write_matrix
from ctxaudit.pipeline.mutation_phase import mutation_phase
from ctxaudit.pipeline.options import AuditOptions, AuditRequest, CannotStart, prepare
from ctxaudit.pipeline.progress import Progress
from ctxaudit.pipeline.properties_phase import POOL, properties_phase

if TYPE_CHECKING:
    from pathlib import Path

    from ctxaudit.result_cache import StepCaches
    from ctxaudit.target_report import TargetReport
    from ctxaudit.timing import AuditTime


@dataclasses.dataclass
class AuditRun:
    """One audit under way: its options, the seed it runs under, its status line, step
    cache and clock, and what it found so far."""

    options: AuditOptions
    seed: int
    show: Progress
    steps: StepCaches
    clock: AuditTime
    started: float
    heads: dict[str, str]  # label -> "[i/n] label", the head of its lines
    reports: dict[str, TargetReport] = dataclasses.field(default_factory=dict)
    gates: dict[str, tuple[int, str]] = dataclasses.field(default_factory=dict)
    #: --shard: label -> the exit code of this part's share of the version's mutants
    #: (its gate is judged over every part's share by ``ctxaudit merge``)
    mutation_shares: dict[str, int] = dataclasses.field(default_factory=dict)
    failed: bool = False  # a property or a gate fails
    unchecked: bool = False  # something could not be checked


def audit(request: AuditRequest) -> int:
    """``ctxaudit audit``: its options prepared (what keeps it from starting is a line,
    exit 2; :class:`~ctxaudit.pipeline.options.BadUsage` is the caller's to say), then
    the run under the interrupt handling. An interrupt while the targets are resolved
    (a download, an environment build) stops their children too: one line, exit 130."""
    procs.reset()
    with procs.on_signals():  # from the start: no moment without them
        try:
            options = prepare(request)
        except CannotStart as exc:
            print(f"ctxaudit: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            procs.interrupt()
            print("ctxaudit: interrupted while resolving the targets: nothing was audited",
                  file=sys.stderr)  # fmt: skip
            return 130
        return audit_with_signals(options)


def audit_with_signals(options: AuditOptions) -> int:
    """Run the audit under the interrupt handling: the signals stop its children, its
    temporary folders are its own; interrupted, the matrix is rebuilt from what
    finished (exit 130)."""
    stuck = False
    with procs.on_signals(), procs.temp_root():
        try:
            with fix_audit(options.fixes, options.own_tests):
                return run_audit(options)
        except KeyboardInterrupt:
            stuck = interrupted(options.out)
    if stuck:  # the temporary folder is gone; a thread left behind must not hold the exit
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    return 130


@contextlib.contextmanager
def fix_audit(on: bool, own_tests: bool = False) -> Iterator[None]:
    """``--no-fixes`` for this run: ``CTXAUDIT_FIXES=0``, and ``--own-tests``:
    ``CTXAUDIT_OWN_TESTS=1`` (the fixed trees run the target's own tests), which the audit
    and its step cache key read, set while it runs and restored after (an in-process
    caller's later runs are its own)."""
    before = {name: os.environ.get(name) for name in ("CTXAUDIT_FIXES", "CTXAUDIT_OWN_TESTS")}
    if not on:
        os.environ["CTXAUDIT_FIXES"] = "0"
    os.environ["CTXAUDIT_OWN_TESTS"] = "1" if own_tests else "0"
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def interrupted(out: Path) -> bool:
    """The audit was interrupted: its children are being stopped; wait for the property
    threads to see it and rebuild the matrix from the reports that are complete. True
    when a thread is still busy after the grace (a step that runs no child of the
    audit's): the process then ends without it."""
    procs.interrupt()
    stuck = procs.wait_threads(POOL, procs.GRACE + 2.0)
    try:
        md, _ = write_matrix(out, pause=False)
        print(f"ctxaudit: interrupted: the matrix lists the versions that finished: {md}",
              file=sys.stderr)  # fmt: skip
    except KeyboardInterrupt:
        print("ctxaudit: interrupted: matrix not rebuilt", file=sys.stderr)
    if stuck:
        print(f"ctxaudit: interrupted: left {len(stuck)} step(s) running", file=sys.stderr)
    return bool(stuck)


def run_audit(options: AuditOptions) -> int:
    """Phase 1, the property suites of every version (:func:`properties_phase`); the
    baseline's verdict; phase 2, mutation (:func:`mutation_phase`); then the reports
    over every version and the exit code (:func:`finish`)."""
    run = start_run(options)
    if options.shard is not None:  # unfinished until finish() says otherwise
        from ctxaudit.pipeline.shards import identity, write_manifest

        took = [t.label for t in options.targets]
        write_manifest(options.out, options.shard, identity(options, run.seed), took)
    properties_phase(run)
    procs.check()
    accepted = None
    if options.baseline is not None:
        verdict = judged_by_baseline(options.baseline, list(run.reports.values()))
        run.failed, accepted = verdict.fails, verdict.accepted
    run.clock.properties_wall_s = time.monotonic() - run.started
    if options.mutation:
        mutation_phase(run)
    return finish(run, accepted)


#: the seed a run under a derandomized profile (``ci``) reports when none is given:
#: each test draws the examples its own code fixes, as under the mutation runner's seed
#: 0; ``--seed 0`` reruns them (a report never says it used no seed)
DERANDOMIZED = 0


def start_run(options: AuditOptions) -> AuditRun:
    """The audit's first line (versions, profile, seed, mutation), its seed, and the
    status line, step cache and clock it keeps."""
    from ctxaudit import audit
    from ctxaudit.result_cache import StepCaches
    from ctxaudit.timing import AuditTime

    chosen = options.targets
    seed = audit.pick_seed(options.profile, options.seeds[0] if options.seeds else None)
    said = f"seed {seed}"
    if seed is None:  # a derandomized profile: what the run draws, said as a seed
        seed = DERANDOMIZED
        said = f"seed {seed} (profile {options.profile} is derandomized)"
    fixed_seeds = options.seeds[1:]
    print(
        f"ctxaudit: {len(chosen)} target version(s), profile {options.profile}, {said}, "
        + (f"fixed trees also under seeds {fixed_seeds}, " if fixed_seeds else "")
        + f"mutation {'on' if options.mutation else 'off'}",
        flush=True,
    )
    started = time.monotonic()
    paths.prune_pycache()  # earlier runs' copies' bytecode (suite_run keeps bytecode)
    clock = AuditTime(command=options.command, profile=options.profile, jobs=options.jobs)
    for t in chosen:  # the time table lists targets in the order they were given
        clock.target(t.label)
    heads = {t.label: f"[{i}/{len(chosen)}] {t.label}" for i, t in enumerate(chosen, 1)}
    return AuditRun(
        options, seed, Progress(sys.stdout.isatty()), StepCaches(options.cache), clock,
        started, heads,
    )  # fmt: skip
