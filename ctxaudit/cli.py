"""ctxaudit command line.

    ctxaudit audit [--target SPEC]... [--profile ci|thorough] [--seed N] [--out DIR]
                   [--mutation/--no-mutation] [--other-sample F] [--peer/--no-peer]
                   [--jobs N] [--since REV]

Exit codes: 0 every property holds and every mutation gate passes; 1 a property
or a gate fails; 2 bad usage or a target that cannot be loaded.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from ctxaudit.profiles import PROFILES
from ctxaudit.targets.gitreins import REPO_ROOT, TargetError

DEFAULT_TARGETS = ["gitreins", "ledger"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        print(f"ctxaudit: {message} (see --help)", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ctxaudit", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    audit = sub.add_parser(
        "audit", help="run the property suites against targets and write reports/"
    )
    audit.add_argument(
        "--target",
        action="append",
        metavar="SPEC",
        help="ledger | gitreins (pinned) | gitreins==X | gitreins>=X (a range resolved on PyPI) | "
        "PATH to a gitreins source tree | lightspeed-stack==TAG | lightspeed-stack@REV | "
        "lightspeed-stack>=X (tags) | PATH to a lightspeed-stack working tree; repeatable "
        "(default: gitreins and ledger)",
    )
    audit.add_argument(
        "--lightspeed-repo",
        metavar="PATH",
        help="lightspeed-stack's git repository (a clone, a bundle or a working tree) that "
        "lightspeed-stack targets are resolved in (default: $CTXAUDIT_LIGHTSPEED_REPO)",
    )
    audit.add_argument(
        "--profile", default="thorough", choices=sorted(PROFILES), help="Hypothesis profile"
    )
    audit.add_argument(
        "--seed",
        type=int,
        action="append",
        help="Hypothesis seed (default: random, printed and reported); repeat it to run the "
        "fully fixed tree of the fix audit under each seed given (the properties of the "
        "unfixed tree and mutation use the first)",
    )
    audit.add_argument("--out", type=Path, default=REPO_ROOT / "reports", help="report folder")
    audit.add_argument(
        "--mutation",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also run the mutation audit and its gate for each target version (default: on)",
    )
    audit.add_argument(
        "--other-sample",
        type=float,
        default=0.25,
        metavar="F",
        help="share of 'other' mutants to run (deterministic sample; removed-write, "
        "wrong-comparison and named mutants always all run; default: 0.25)",
    )
    audit.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        metavar="N",
        help="property suites of N target versions at once (one core each); mutation runs "
        "one version at a time on every core (default: the number of cores)",
    )
    audit.add_argument(
        "--since",
        metavar="REV",
        help="pull-request gate: mutate only the functions in scope that changed since REV "
        "in the target's git history (a gitreins source tree given as a path, or ledger); "
        "the properties run as usual",
    )
    audit.add_argument(
        "--cache",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="reuse a target version's property phase (under a given --seed) and mutation "
        "run from .cache/audit-results/ while nothing they read changed, and mutant "
        "verdicts from .cache/mutation-verdicts/; --no-cache runs everything again "
        "(and stores the results) (default: on)",
    )
    audit.add_argument(
        "--peer",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="with mutation, also run the same gitreins mutants against gitreins' own tests "
        "(from its sdist) and report both scores side by side; never gated (default: on)",
    )
    audit.add_argument(
        "--mutate",
        choices=["released", "fixed"],
        default="released",
        help="the tree the mutation audit mutates: the released one, with the regions of "
        "the known findings that affect it left out, or the fully fixed one of the fix "
        "audit, where the fixed findings' regions are checked too (default: released)",
    )
    attribute = sub.add_parser(
        "attribute",
        help="rerun one attribution of the fix audit: replay a failure's example on an "
        "unfixed copy of a target version and on the copy with one fix alone",
    )
    attribute.add_argument("test", metavar="NODEID", help="the failing test's pytest node id")
    attribute.add_argument(
        "--target",
        required=True,
        metavar="SPEC",
        help="gitreins==X, or one lightspeed-stack tree (lightspeed-stack@REV, ==TAG, a path)",
    )
    attribute.add_argument(
        "--lightspeed-repo",
        metavar="PATH",
        help="lightspeed-stack's git repository the tree is resolved in "
        "(default: $CTXAUDIT_LIGHTSPEED_REPO)",
    )
    attribute.add_argument("--fix", required=True, metavar="FINDING", help="the finding's id")
    attribute.add_argument(
        "--blob", help="the shrunk example (the b'...' of its @reproduce_failure); "
        "without it the test is rerun"
    )  # fmt: skip
    attribute.add_argument("--profile", default="ci", choices=sorted(PROFILES))
    attribute.add_argument("--seed", type=int)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "jobs", 1) < 1:
        parser.error("--jobs must be at least 1")
    if not 0.0 < getattr(args, "other_sample", 1.0) <= 1.0:
        parser.error("--other-sample must be in (0, 1]")
    if args.command == "attribute":
        from ctxaudit import audit as _audit
        from ctxaudit.targets.lightspeed.tree import repo_from as _repo_from

        return _audit.run_attribute(
            args.target, args.fix, args.test, args.blob, args.profile, args.seed,
            _repo_from(args.lightspeed_repo),
        )  # fmt: skip
    if args.command != "audit":
        parser.print_help()
        return 0 if args.command is None else 2
    from ctxaudit import audit
    from ctxaudit.targets import get as get_target
    from ctxaudit.targets.lightspeed.tree import repo_from

    repo = repo_from(args.lightspeed_repo)
    targets = []
    for spec in args.target or DEFAULT_TARGETS:
        try:
            targets += audit.parse_target(spec, repo)
        except TargetError as exc:
            print(f"ctxaudit: {exc}", file=sys.stderr)
            return 2
    changed = {}
    if args.since:
        from ctxaudit.since import SinceError, selection

        try:
            changed = selection(targets, args.since)
        except SinceError as exc:
            print(f"ctxaudit: {exc}", file=sys.stderr)
            return 2
        for label, ch in changed.items():
            print(
                f"ctxaudit: {label}: {len(ch.functions)} function(s) in scope changed since "
                f"{args.since}: " + (", ".join(f"{p}:{q}" for p, q in ch.functions) or "none"),
                flush=True,
            )
    seed = audit.pick_seed(args.profile, args.seed[0] if args.seed else None)
    fixed_seeds = list(args.seed or [])[1:]
    print(
        f"ctxaudit: {len(targets)} target version(s), profile {args.profile}, seed {seed}, "
        + (f"fixed trees also under seeds {fixed_seeds}, " if fixed_seeds else "")
        + f"mutation {'on' if args.mutation else 'off'}",
        flush=True,
    )
    started = time.monotonic()
    failed = False
    show = Progress(sys.stdout.isatty())
    from ctxaudit.timing import AuditTime

    clock = AuditTime(
        command="ctxaudit " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:])),
        profile=args.profile,
        jobs=args.jobs,
    )
    heads = {t.label: f"[{i}/{len(targets)}] {t.label}" for i, t in enumerate(targets, 1)}
    for t in targets:  # the time table lists targets in the order they were given
        clock.target(t.label)

    # Phase 1: the property suites, one process per target version, --jobs at a time
    # (each is one pytest process: one core).
    from ctxaudit.result_cache import StepCaches

    steps = StepCaches(args.cache)

    def properties(target: audit.Target) -> audit.TargetReport:
        expected = audit.previous_elapsed(args.out, target, args.profile)
        hint = f", expected ~{expected:.0f} s" if expected else ""
        t0 = time.monotonic()
        try:
            key = steps.properties_key(target, args.profile, seed, fixed_seeds)
            reused = steps.reuse_properties(key, target, args.out)
            if reused is not None:
                clock.target(target.label).properties_reused = True
                return reused
            report = audit.run_target(
                target,
                args.profile,
                seed,
                args.out,
                lambda phase, t, label=target.label, hint=hint: show.status(
                    label, f"{phase} {t}{hint}"
                ),
                fixed_seeds=fixed_seeds,
            )
            steps.store_properties(key, report, args.out)
            if report.fixed:
                clock.target(target.label).fixes_s = report.fixed.get("elapsed_s")
            return report
        finally:
            clock.target(target.label).properties_s = time.monotonic() - t0

    reports: dict[str, audit.TargetReport] = {}
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(properties, t): t for t in targets}
        for fut in as_completed(futures):
            target = futures[fut]
            report = reports[target.label] = fut.result()
            show.done(target.label)
            fails = [p for p, v in report.verdicts.items() if v == "fails"]
            status = (
                "properties hold" if report.ok else f"FAILS {' '.join(fails) or '(suite error)'}"
            )
            show.line(
                f"{heads[target.label]}: {status} ({report.elapsed_s} s) -> "
                f"{args.out / target.label}/findings.md"
            )
            failed |= not report.ok
    clock.properties_wall_s = time.monotonic() - started
    # Phase 2: mutation, one target version at a time (each run uses every core).
    if args.mutation:
        for target in targets:
            head = heads[target.label]
            scope = get_target(target.kind).mutation
            if scope is None or not scope.audited:
                show.line(
                    f"{head}: mutation not run: not wired into the audit for {target.kind} "
                    "trees yet"
                )
                continue
            only = changed[target.label].only_globs() if args.since else []
            if args.since and not only:
                show.line(f"{head}: mutation not run: no function in scope changed since "
                          f"{args.since}")  # fmt: skip
                continue
            t0 = time.monotonic()
            known = reports[target.label].known
            # --mutate fixed: the fixes the fix audit applied to its fully fixed tree
            fixed = reports[target.label].fixed if args.mutate == "fixed" else None
            fixes = list((fixed or {}).get("applied") or [])
            mkey = steps.mutation_key(
                target, args.other_sample, args.peer, known, only, fixes=fixes
            )
            hit = steps.reuse_mutation(mkey, target, args.out)
            if hit is not None:
                code, output = hit
                clock.target(target.label).mutation_reused = True
            else:
                code, output = audit.run_mutation(
                    target,
                    args.out,
                    lambda t, label=target.label: show.status(label, f"mutation: {t}"),
                    other_sample=args.other_sample,
                    peer=args.peer,
                    known=known,
                    only=only,
                    cache=args.cache,
                    fixes=fixes,
                )
                steps.store_mutation(mkey, code, output, target, args.out)
            show.done(target.label)
            clock.target(target.label).mutation_s = time.monotonic() - t0
            clock.read_mutation(target.label, args.out / target.label / "mutation.json")
            verdict = {0: "mutation gate passes", 1: "mutation gate FAILS"}.get(
                code, f"mutation could not run (exit {code}): {output.strip().splitlines()[-1:]}"
            )
            if hit is not None:
                verdict += " (reused: nothing it reads changed)"
            show.line(f"{head}: {verdict} -> {args.out / target.label}/mutation.md")
            failed |= code != 0
    from ctxaudit import matrix

    md_path, html_path = matrix.write(matrix.build(matrix.find_reports(args.out)), args.out)
    print(f"ctxaudit: matrix of every version in {args.out}: {md_path.name}, {html_path.name}")
    clock.total_s = time.monotonic() - started
    clock.mutation_wall_s = clock.total_s - clock.properties_wall_s
    if args.cache:
        print(f"ctxaudit: reused from {steps.store.directory}: {steps.summary()}")
    print(f"ctxaudit: where the time went: {clock.write(args.out)}")
    print(f"ctxaudit: done in {clock.total_s:.0f} s", flush=True)
    return 1 if failed else 0


class Progress:
    """The running jobs on one status line, rewritten in place on a terminal; a
    heartbeat line every 30 s otherwise (logs, CI)."""

    def __init__(self, tty: bool) -> None:
        self.tty = tty
        self.last = 0.0
        self.running: dict[str, str] = {}
        self.lock = threading.Lock()

    def status(self, label: str, text: str) -> None:
        with self.lock:
            self.running[label] = text
            line = " | ".join(f"{k}: {v}" for k, v in self.running.items())
            if self.tty:
                print(f"\r\033[K{line[: shutil.get_terminal_size().columns - 1]}", end="")
                sys.stdout.flush()
            elif time.monotonic() - self.last > 30:
                self.last = time.monotonic()
                print(line, flush=True)

    def done(self, label: str) -> None:
        with self.lock:
            self.running.pop(label, None)

    def line(self, text: str) -> None:
        with self.lock:
            print(f"\r\033[K{text}" if self.tty else text, flush=True)
