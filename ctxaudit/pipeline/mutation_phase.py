"""Phase 2 of an audit run: mutation, one target version at a time (each run uses
every core), and each version's mutation gate."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctxaudit.pipeline.run import AuditRun
    from ctxaudit.targets.base import Described


def mutation_phase(run: AuditRun) -> None:
    """Phase 2: mutation, one target version at a time (each run uses every core); a
    line per version: its gate's verdict, or why mutation did not run."""
    if run.options.shard is not None:
        shared_mutation_phase(run)
        return
    for target in run.options.targets:
        why = mutation_not_run(run, target)
        if why:
            run.show.line(f"{run.heads[target.label]}: mutation not run: {why}")
            continue
        mutation_of(run, target)


def mutation_not_run(run: AuditRun, target: Described) -> str:
    """Why a version's mutation audit does not run ("" when it does)."""
    from ctxaudit.targets import get as get_target

    scope = get_target(target.kind).mutation
    if scope is None or not scope.audited:
        return f"not wired into the audit for {target.kind} trees yet"
    if target.label not in run.reports:
        return "its properties could not be checked"
    since = run.options.since
    if since and not run.options.changed[target.label].only_globs():
        return f"no function in scope changed since {since}"
    return ""


def mutation_of(run: AuditRun, target: Described) -> None:
    """One version's mutation audit (reused from the step cache while nothing it reads
    changed), its time on the clock, and its gate's verdict."""
    from ctxaudit import audit

    options = run.options
    only = options.changed[target.label].only_globs() if options.since else []
    t0 = time.monotonic()
    known = run.reports[target.label].known
    # --mutate fixed: the fixes the fix audit applied to its fully fixed tree
    fixed = run.reports[target.label].fixed if options.mutate == "fixed" else None
    fixes = list((fixed or {}).get("applied") or [])
    mkey = run.steps.mutation_key(target, options.other_sample, options.peer, known, only,
                                  fixes=fixes)  # fmt: skip
    hit = run.steps.reuse_mutation(mkey, target, options.out)
    if hit is not None:
        code, output = hit
        run.clock.target(target.label).mutation_reused = True
    else:
        mutation = audit.MutationOptions(
            other_sample=options.other_sample, peer=options.peer, known=known, only=only,
            cache=options.cache, fixes=fixes,
            # a pull-request gate: the verdicts of the changed functions' mutants; the
            # scope's coverage is the release audit's figure
            coverage=not options.since,
        )  # fmt: skip

        def progress(t: str) -> None:
            run.show.status(target.label, f"mutation: {t}")

        code, output = audit.run_mutation(target, options.out, progress, options=mutation)
        run.steps.store_mutation(mkey, code, output, target, options.out)
    run.show.done(target.label)
    run.clock.target(target.label).mutation_s = time.monotonic() - t0
    run.clock.read_mutation(target.label, options.out / target.label / "mutation.json")
    gate_verdict(run, target, code, output, reused=hit is not None)


def shared_mutation_phase(run: AuditRun) -> None:
    """``--shard i/N``: this part's share of every version's mutants, the i-th of N
    deterministic parts of each (so the parts take about equal time whatever the
    versions' sizes). A version whose properties another part audits gets its known
    findings checked here, to leave out the same regions. Each version's gate is judged
    over all the shares by ``ctxaudit merge``; a share that did not run is could not
    check."""
    from ctxaudit import audit
    from ctxaudit.targets import get as get_target

    options = run.options
    assert options.shard is not None
    share = (options.shard.index, options.shard.count)
    for target in options.plan:
        head = run.heads.get(target.label, f"[{options.shard}] {target.label}")
        scope = get_target(target.kind).mutation
        if scope is None or not scope.audited:
            run.show.line(f"{head}: mutation not run: not wired into the audit for "
                          f"{target.kind} trees yet")  # fmt: skip
            continue
        only = options.changed[target.label].only_globs() if options.since else []
        if options.since and not only:
            run.show.line(f"{head}: mutation not run: no function in scope changed since "
                          f"{options.since}")  # fmt: skip
            continue

        def progress(t: str, label: str = target.label) -> None:
            run.show.status(label, f"mutation share {options.shard}: {t}")

        t0 = time.monotonic()
        try:  # ctxaudit's own error here is no verdict: its share could not be checked
            if target.label in run.reports:
                known = run.reports[target.label].known
            else:  # audited by another part: which of its findings' regions to leave out
                known = audit.known_findings(target)
            mutation = audit.MutationOptions(
                other_sample=options.other_sample, peer=options.peer, known=known, only=only,
                cache=options.cache, coverage=not options.since, shard=share,
            )  # fmt: skip
            code, output = audit.run_mutation(target, options.out, progress, options=mutation)
        except Exception as exc:  # noqa: BLE001
            code, output = 2, f"{type(exc).__name__}: {exc}"
        run.show.done(target.label)
        run.clock.target(target.label).mutation_s = time.monotonic() - t0
        run.mutation_shares[target.label] = code
        if code in (0, 1):
            run.show.line(f"{head}: mutation share {options.shard} run; its gate is judged by "
                          "`ctxaudit merge` over every part's share")  # fmt: skip
        else:
            last = output.strip().splitlines()[-1:]
            run.show.line(f"{head}: COULD NOT CHECK: mutation share {options.shard} could not "
                          f"run (exit {code}): {last[0] if last else '(no output)'}")  # fmt: skip
            run.unchecked = True


def gate_line(code: int, output: str) -> str:
    """A mutation gate's verdict, as its line says it."""
    last = output.strip().splitlines()[-1:]
    return {0: "mutation gate passes", 1: "mutation gate FAILS"}.get(
        code, f"COULD NOT CHECK: mutation could not run (exit {code}): "
        f"{last[0] if last else '(no output)'}"
    )  # fmt: skip


def gate_verdict(run: AuditRun, target: Described, code: int, output: str, reused: bool) -> None:
    """A version's mutation gate, said in a line and counted: passes (exit 0), fails
    (1), or could not check (any other exit)."""
    verdict = gate_line(code, output)
    if reused:
        verdict += " (reused: nothing it reads changed)"
    run.show.line(
        f"{run.heads[target.label]}: {verdict} -> {run.options.out / target.label}/mutation.md"
    )
    run.gates[target.label] = (code, verdict)
    run.failed |= code == 1
    run.unchecked |= code not in (0, 1)
