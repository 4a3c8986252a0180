"""ctxaudit command line.

    ctxaudit audit [--target SPEC]... [--release] [--profile ci|thorough] [--seed N]
                   [--out DIR] [--mutation/--no-mutation] [--other-sample F] [--peer/--no-peer]
                   [--jobs N] [--since REV] [--baseline FILE]
    ctxaudit baseline --target SPEC... --out FILE
    ctxaudit test [PYTEST ARGS]          pytest over ctxaudit's suites (a report's reruns)
    ctxaudit mutation run|merge [ARGS]   the mutation runner (a mutation report's replays)

``test`` and ``mutation`` run in the root of ctxaudit's files (a checkout, or an
installed build's copy of its suites), where the test paths a report prints are: they
are what the commands a report prints run, in a checkout as ``bin/ctxaudit ...``.

Each target version is audited once: targets that name the same version (``gitreins``
and ``gitreins==X``, a range and a version inside it) run once, in the order first given.
``--seed`` is a non-negative decimal integer. ``--out`` is checked (a folder, or one
that can be made, and writable) and every target resolved before anything runs.

Exit codes: 0 every property holds and every mutation gate passes; 1 a property
or a gate fails (and everything else was checked); 2 bad usage, a target that cannot
be loaded, or something ctxaudit could not check (its own error, a tree it cannot
drive, a suite or a mutation run that did not run: "COULD NOT CHECK"); 130 the audit
was interrupted (SIGINT, SIGTERM): the versions that finished keep their reports, the
interrupted ones get none, and the matrix is rebuilt from what finished.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import shlex
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from ctxaudit import fix_patches, procs, targets
from ctxaudit.outcomes import COULD_NOT_CHECK, FAILS, HOLDS
from ctxaudit.paths import IN_CHECKOUT, require_home, use_root
from ctxaudit.profiles import PROFILES, parse_seed
from ctxaudit.targets import TargetError
from ctxaudit.targets.base import Described

if TYPE_CHECKING:
    from ctxaudit.baseline import Baseline
    from ctxaudit.result_cache import StepCaches
    from ctxaudit.target_report import TargetReport
    from ctxaudit.timing import AuditTime


def default_targets() -> list[str]:
    """What the audit checks when no ``--target`` is given: each registered target's
    default spec (gitreins' pinned release and the ledger)."""
    return [t.default_spec for t in targets.all_targets() if t.default_spec]


def _target_help() -> str:
    forms = " | ".join(f"{t.name}: {t.spec_forms}" for t in targets.all_targets() if t.spec_forms)
    return f"{forms}; repeatable (default: {', '.join(default_targets())})"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2
        print(f"ctxaudit: {message} (see --help)", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ctxaudit", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"ctxaudit {_version()}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    audit = sub.add_parser(
        "audit", help="run the property suites against targets and write reports/"
    )
    _add_audit_targets(audit)
    _add_run_options(audit)
    _add_step_options(audit)
    _add_gate_options(audit)
    _add_baseline_command(sub)
    _add_attribute_command(sub)
    for name, what in _PASSED_ON.items():
        sub.add_parser(name, help=what, add_help=False)
    return parser


#: the commands whose arguments are passed on whole, to pytest or the mutation runner
_PASSED_ON = {
    "test": "pytest over ctxaudit's suites, in the root of its files (PYTEST ARGS as "
    "pytest takes them): what a report's rerun and replay commands run",
    "mutation": "the mutation runner (run|merge ...; mutation/README.md), in the root of "
    "ctxaudit's files: what a mutation report's replay commands run",
}
#: the commands that work under ctxaudit's home (checked usable before they start)
_RUNS = {"audit", "baseline", "attribute", *_PASSED_ON}


def _pass_on(command: str, args: list[str]) -> NoReturn:
    """``ctxaudit test`` / ``ctxaudit mutation``: pytest, or the mutation runner, in this
    interpreter, from the root of ctxaudit's files (where a report's test paths are and
    ``model``, ``ledger``, ``mutation`` and ``tests`` import), as ``bin/ctxaudit`` runs
    them in a checkout. The process becomes it: its exit code and signals are its own."""
    from ctxaudit.paths import REPO_ROOT

    module = "pytest" if command == "test" else "mutation"
    sys.stdout.flush()
    sys.stderr.flush()
    os.chdir(REPO_ROOT)
    os.execv(sys.executable, [sys.executable, "-m", module, *args])


def _add_audit_targets(audit: argparse.ArgumentParser) -> None:
    """``audit``'s options of what is audited, how, and where its reports go."""
    audit.add_argument(
        "--target",
        action="append",
        metavar="SPEC",
        help=_target_help(),
    )
    _add_repo_options(audit)
    audit.add_argument(
        "--release",
        action="store_true",
        help="the thorough release audit: the thorough profile and the mutation audit "
        "(with the peer suite), unless --profile or --no-mutation say otherwise",
    )
    audit.add_argument(
        "--profile",
        choices=sorted(PROFILES),
        help="Hypothesis profile (default: ci; thorough with --release)",
    )
    audit.add_argument(
        "--seed",
        type=parse_seed,
        action="append",
        metavar="N",
        help="Hypothesis seed, a non-negative decimal integer (default: random, printed "
        "and reported); repeat it to run the "
        "fully fixed tree of the fix audit under each seed given (the properties of the "
        "unfixed tree and mutation use the first)",
    )
    audit.add_argument(
        "--out",
        type=Path,
        default=Path("reports"),
        help="report folder (default: reports/ under the current folder): a folder, or one "
        "that can be made, and writable (checked before anything runs)",
    )


def _add_run_options(audit: argparse.ArgumentParser) -> None:
    """``audit``'s options of what runs: mutation or not, its sample, the versions at
    once, the pull-request gate's scope."""
    audit.add_argument(
        "--mutation",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="also run the mutation audit and its gate for each target version (default: "
        "off; on with --release)",
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
        "in the target's git history (a source tree given as a path, or ledger); the "
        "properties run as usual",
    )


def _add_step_options(audit: argparse.ArgumentParser) -> None:
    """``audit``'s options of its steps: the fix audit, the step cache, the peer suite,
    the tree mutation mutates."""
    audit.add_argument(
        "--fixes",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="verify each known finding's fix on the version (the fix audit: its regression "
        "test, every property on the fully fixed tree); default: on, off with --since (a "
        "pull-request gate checks the change; the fixes are the release audit's)",
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
        help="with mutation, also run the same mutants against the target's own tests where "
        "it has some (gitreins: its sdist's) and report both scores side by side; never gated "
        "(default: on)",
    )
    audit.add_argument(
        "--mutate",
        choices=["released", "fixed"],
        default="released",
        help="the tree the mutation audit mutates: the released one, with the regions of "
        "the known findings that affect it left out, or the fully fixed one of the fix "
        "audit, where the fixed findings' regions are checked too (default: released)",
    )


def _add_gate_options(audit: argparse.ArgumentParser) -> None:
    """``audit``'s options of the gate and the files CI systems read."""
    audit.add_argument(
        "--baseline",
        type=Path,
        metavar="FILE",
        help="the known findings the gate accepts (written by `ctxaudit baseline`): the "
        "properties pass while only those reproduce; any other finding fails, and so does "
        "an entry that no longer reproduces (remove it so that its return fails the gate)",
    )
    audit.add_argument(
        "--junit-xml",
        type=Path,
        metavar="FILE",
        help="also write the verdicts as JUnit XML: a test case per property, per known or "
        "new finding and per mutation gate of each target version",
    )
    audit.add_argument(
        "--sarif",
        type=Path,
        metavar="FILE",
        help="also write the findings as SARIF 2.1.0: a result per new finding and per "
        "reproducing known finding (at the line its fix changes), the property its rule",
    )


def _add_baseline_command(sub: Any) -> None:
    base = sub.add_parser(
        "baseline",
        help="write a baseline: the known findings that reproduce now, one entry each, "
        "whose reasons a person gives (for audit --baseline)",
    )
    base.add_argument(
        "--target", action="append", metavar="SPEC", help="as audit's --target; repeatable"
    )
    base.add_argument("--out", type=Path, required=True, metavar="FILE", help="the file to write")
    _add_repo_options(base)
    base.add_argument("--profile", default="ci", choices=sorted(PROFILES))
    base.add_argument("--seed", type=parse_seed, metavar="N", help="Hypothesis seed")


def _add_attribute_command(sub: Any) -> None:
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
        help="one version of a target with a fix audit, as --target names it",
    )
    _add_repo_options(attribute)
    attribute.add_argument("--fix", required=True, metavar="FINDING", help="the finding's id")
    attribute.add_argument(
        "--blob", help="the shrunk example (the b'...' of its @reproduce_failure); "
        "without it the test is rerun"
    )  # fmt: skip
    attribute.add_argument("--profile", default="ci", choices=sorted(PROFILES))
    attribute.add_argument("--seed", type=parse_seed, metavar="N", help="Hypothesis seed")


def _one_line(exc: BaseException) -> str:
    """An error as one line (a parser's message can carry a caret diagram below it)."""
    lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()]
    return lines[0] if lines else type(exc).__name__


def check_out(out: Path) -> str | None:
    """Why ``--out`` cannot take the reports (None when it can): it must be a folder, or
    one that can be made, and writable. Makes the folder."""
    if out.exists() and not out.is_dir():
        return f"--out {out}: not a folder"
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"--out {out}: cannot make the folder ({exc.strerror or exc})"
    try:
        fd, probe = tempfile.mkstemp(prefix=".ctxaudit-probe-", dir=out)
    except OSError as exc:
        return f"--out {out}: not writable ({exc.strerror or exc})"
    os.close(fd)
    os.unlink(probe)
    return None


def _check_file(option: str, path: Path | None) -> str | None:
    """Why a report file cannot be written at ``path`` (None when it can, or is not asked
    for): not a folder, and in a folder that is there or can be made."""
    if path is None:
        return None
    if path.is_dir():
        return f"{option} {path}: a folder, not a file"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"{option} {path}: cannot make its folder ({exc.strerror or exc})"
    # the file is written whole at the end (beside it, then renamed): its folder must
    # take a new file, which only trying tells (/proc, a read-only mount, a full disk)
    try:
        fd, probe = tempfile.mkstemp(prefix=".ctxaudit-probe-", dir=path.parent)
    except OSError as exc:
        return f"{option} {path}: its folder is not writable ({exc.strerror or exc})"
    os.close(fd)
    os.unlink(probe)
    return None


def unique(targets: list[Described]) -> list[Described]:
    """One entry per distinct target version (its label), in the order first given."""
    seen: dict[str, Described] = {}
    for t in targets:
        seen.setdefault(t.label, t)
    return list(seen.values())


def _add_repo_options(parser: argparse.ArgumentParser) -> None:
    """The registered targets' repository options (``--lightspeed-repo``)."""
    for option in targets.repo_options():
        parser.add_argument(option.option, metavar="PATH", help=option.help)


def _repos(args: argparse.Namespace) -> dict[str, Path | None]:
    """target name -> the repository its specs resolve in (option or environment)."""
    return targets.repos({o.dest: getattr(args, o.dest, None) for o in targets.repo_options()})


def _version() -> str:
    from ctxaudit.suite import commit, installed_version

    return installed_version() + (f" (checkout {commit()})" if IN_CHECKOUT else "")


def main(argv: list[str] | None = None) -> int:
    use_root()
    given = sys.argv[1:] if argv is None else argv
    if given and given[0] in _RUNS:  # not --version or --help: they work whatever the home
        require_home()
    if given and given[0] in _PASSED_ON:  # its options are pytest's or the runner's
        _pass_on(given[0], given[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if isinstance(getattr(args, "out", None), Path):
        args.out = args.out.resolve()  # the audit's own processes run elsewhere
    if getattr(args, "jobs", 1) < 1:
        parser.error("--jobs must be at least 1")
    if not 0.0 < getattr(args, "other_sample", 1.0) <= 1.0:
        parser.error("--other-sample must be in (0, 1]")
    if args.command == "attribute":
        from ctxaudit import audit as _audit

        if _empty_spec([args.target]):
            parser.error(str(_empty_spec([args.target])))

        return _audit.run_attribute(
            _audit.AttributeRequest(
                args.target, args.fix, args.test, args.blob, args.profile, args.seed,
                _repos(args),
            )
        )  # fmt: skip
    if args.command == "baseline":
        return _write_baseline(args)
    if args.command != "audit":
        parser.print_help()
        return 0 if args.command is None else 2
    try:
        options = _audit_options(parser, args, argv)
    except _CannotStart as exc:
        print(f"ctxaudit: {exc}", file=sys.stderr)
        return 2
    return _audit_with_signals(options)


@dataclasses.dataclass(frozen=True)
class AuditOptions:
    """``ctxaudit audit``'s options, checked before anything runs: the target versions
    (each once, in the order first given), where the reports go, and how each phase
    runs (the command line's options of the same names)."""

    targets: list[Described]
    out: Path
    profile: str
    seeds: list[int]  # --seed: the first for everything, the others for the fixed trees
    jobs: int
    mutation: bool
    other_sample: float
    peer: bool
    mutate: str
    fixes: bool
    cache: bool
    since: str | None
    changed: dict[str, Any]  # --since: target label -> what changed (ctxaudit.since)
    baseline: Baseline | None
    junit_xml: Path | None
    sarif: Path | None
    command: str  # the command line, for the time table


class _CannotStart(Exception):
    """Why the audit cannot start (a line; exit 2)."""


def _audit_options(
    parser: argparse.ArgumentParser, args: argparse.Namespace, argv: list[str] | None
) -> AuditOptions:
    """The audit's options from its arguments: the baseline read, every target resolved,
    ``--out`` and the report files checked, ``--since``'s changes found. Raises
    :class:`_CannotStart` (or exits through ``parser.error``) when it cannot start."""
    baseline = _load_baseline(args.baseline)
    if args.profile is None:  # a first run sees its answer in a minute; --release is thorough
        args.profile = "thorough" if args.release else "ci"
    if args.mutation is None:  # a pull-request gate (--since) is a mutation run
        args.mutation = bool(args.release or args.since)
    fixes = not args.since if args.fixes is None else args.fixes
    if not fixes and args.mutate == "fixed":
        parser.error("--mutate fixed mutates the fix audit's fully fixed tree: not with "
                     "--no-fixes (or --since without --fixes)")  # fmt: skip
    why = (  # before any target is resolved (a download, an environment built)
        _empty_spec(args.target or [])
        or check_out(args.out)
        or _check_file("--junit-xml", args.junit_xml)
        or _check_file("--sarif", args.sarif)
    )
    if why is not None:
        raise _CannotStart(why)
    found = _resolve_targets(args)
    chosen = unique(found)
    changed = _changed_since(chosen, args.since) if args.since else {}
    if len(chosen) < len(found):
        print(f"ctxaudit: {len(found) - len(chosen)} target(s) given twice: each version "
              "runs once", flush=True)  # fmt: skip
    return AuditOptions(
        targets=chosen, out=args.out, profile=args.profile, seeds=list(args.seed or []),
        jobs=args.jobs, mutation=args.mutation, other_sample=args.other_sample,
        peer=args.peer, mutate=args.mutate, fixes=fixes, cache=args.cache, since=args.since,
        changed=changed, baseline=baseline, junit_xml=args.junit_xml, sarif=args.sarif,
        command="ctxaudit " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:])),
    )  # fmt: skip


def _empty_spec(specs: list[str]) -> str | None:
    """Why a ``--target`` given empty is refused (None when none is): a target's
    resolver reads an empty spec as its pinned release, so it would audit a target
    nobody named."""
    for spec in specs:
        if not spec.strip():
            return f"--target {spec!r}: an empty spec names no target"
    return None


def _load_baseline(path: Path | None) -> Baseline | None:
    """``--baseline``, read (None when not given)."""
    if path is None:
        return None
    from ctxaudit.baseline import BaselineError, load

    try:
        return load(path)
    except BaselineError as exc:
        raise _CannotStart(str(exc)) from None


def _resolve_targets(args: argparse.Namespace) -> list[Described]:
    """The target versions every ``--target`` names (default: the registered targets'
    default specs), in the order given, resolved in their repositories."""
    from ctxaudit import audit

    repos = _repos(args)
    found: list[Described] = []
    for spec in args.target or default_targets():
        try:
            found += audit.parse_target(spec, repos)
        except TargetError as exc:
            raise _CannotStart(_one_line(exc)) from None
    return found


def _changed_since(chosen: list[Described], since: str) -> dict[str, Any]:
    """``--since``: what changed in each version's history since ``since`` (a line each
    naming the functions in scope that changed)."""
    from ctxaudit.since import SinceError, selection

    try:
        changed = selection(chosen, since)
    except SinceError as exc:
        raise _CannotStart(_one_line(exc)) from None
    for label, ch in changed.items():
        print(
            f"ctxaudit: {label}: {len(ch.functions)} function(s) in scope changed since "
            f"{since}: " + (", ".join(f"{p}:{q}" for p, q in ch.functions) or "none"),
            flush=True,
        )
    return dict(changed)


def _audit_with_signals(options: AuditOptions) -> int:
    """Run the audit under the interrupt handling: the signals stop its children, its
    temporary folders are its own; interrupted, the matrix is rebuilt from what
    finished (exit 130)."""
    procs.reset()
    stuck = False
    with procs.on_signals(), procs.temp_root():
        try:
            with _fix_audit(options.fixes):
                return _run_audit(options)
        except KeyboardInterrupt:
            stuck = _interrupted(options.out)
    if stuck:  # the temporary folder is gone; a thread left behind must not hold the exit
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    return 130


_POOL = "ctxaudit-properties"


@contextlib.contextmanager
def _fix_audit(on: bool) -> Iterator[None]:
    """``--no-fixes`` for this run: ``CTXAUDIT_FIXES=0``, which the audit and its step
    cache key read, set while it runs and restored after (an in-process caller's later
    runs are its own)."""
    before = os.environ.get("CTXAUDIT_FIXES")
    if not on:
        os.environ["CTXAUDIT_FIXES"] = "0"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("CTXAUDIT_FIXES", None)
        else:
            os.environ["CTXAUDIT_FIXES"] = before


def _interrupted(out: Path) -> bool:
    """The audit was interrupted: its children are being stopped; wait for the property
    threads to see it and rebuild the matrix from the reports that are complete. True
    when a thread is still busy after the grace (a step that runs no child of the
    audit's): the process then ends without it."""
    procs.interrupt()
    stuck = procs.wait_threads(_POOL, procs.GRACE + 2.0)
    try:
        md, _ = _write_matrix(out, pause=False)
        print(f"ctxaudit: interrupted: the matrix lists the versions that finished: {md}",
              file=sys.stderr)  # fmt: skip
    except KeyboardInterrupt:
        print("ctxaudit: interrupted: matrix not rebuilt", file=sys.stderr)
    if stuck:
        print(f"ctxaudit: interrupted: left {len(stuck)} step(s) running", file=sys.stderr)
    return bool(stuck)


def _write_matrix(out: Path, pause: bool = True) -> tuple[Path, Path]:
    """matrix.md and matrix.html of every version in ``out`` that has a readable report;
    the folders skipped are named in the matrix and in one line on stderr."""
    from ctxaudit import matrix

    m = matrix.build(matrix.find_reports(out))
    if m.skipped:
        names = "; ".join(f"{s.dir.name} ({s.why})" for s in m.skipped)
        print(f"ctxaudit: matrix: skipped {len(m.skipped)} unreadable report(s): {names}",
              file=sys.stderr, flush=True)  # fmt: skip
    return matrix.write(m, out, pause=pause)


def _status(report: TargetReport) -> str:
    """A version's line: its properties' outcome, the third one said as itself."""
    if report.outcome == COULD_NOT_CHECK:
        first = report.unchecked[0]["why"] if report.unchecked else "a property's check"
        return f"COULD NOT CHECK: {first}"
    if report.outcome == FAILS:
        return "FAILS " + " ".join(p for p, v in report.verdicts.items() if v == FAILS)
    if not report.ok:  # neither a finding nor unchecked, yet not ok: say what pytest said
        return f"could not tell (pytest exit {report.exit_status})"
    return "properties hold"


@dataclasses.dataclass
class _AuditRun:
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
    failed: bool = False  # a property or a gate fails
    unchecked: bool = False  # something could not be checked


def _run_audit(options: AuditOptions) -> int:
    """Phase 1, the property suites of every version (:func:`_properties_phase`); the
    baseline's verdict; phase 2, mutation (:func:`_mutation_phase`); then the reports
    over every version and the exit code (:func:`_finish`)."""
    run = _start_run(options)
    _properties_phase(run)
    procs.check()
    accepted = None
    if options.baseline is not None:
        verdict = _judged_by_baseline(options.baseline, list(run.reports.values()))
        run.failed, accepted = verdict.fails, verdict.accepted
    run.clock.properties_wall_s = time.monotonic() - run.started
    if options.mutation:
        _mutation_phase(run)
    return _finish(run, accepted)


#: the seed a run under a derandomized profile (``ci``) reports when none is given:
#: each test draws the examples its own code fixes, as under the mutation runner's seed
#: 0; ``--seed 0`` reruns them (a report never says it used no seed)
DERANDOMIZED = 0


def _start_run(options: AuditOptions) -> _AuditRun:
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
    clock = AuditTime(command=options.command, profile=options.profile, jobs=options.jobs)
    for t in chosen:  # the time table lists targets in the order they were given
        clock.target(t.label)
    heads = {t.label: f"[{i}/{len(chosen)}] {t.label}" for i, t in enumerate(chosen, 1)}
    return _AuditRun(
        options, seed, Progress(sys.stdout.isatty()), StepCaches(options.cache), clock,
        started, heads,
    )  # fmt: skip


def _properties_phase(run: _AuditRun) -> None:
    """Phase 1: the property suites, one process per target version, ``--jobs`` at a
    time (each is one pytest process: one core); a line per version as it finishes."""
    options = run.options
    pool = ThreadPoolExecutor(max_workers=max(1, options.jobs), thread_name_prefix=_POOL)
    try:
        futures = {pool.submit(_properties_of, run, t): t for t in options.targets}
        for fut in as_completed(futures):
            target = futures[fut]
            run.show.done(target.label)
            try:
                report = run.reports[target.label] = fut.result()
            except Exception as exc:  # ctxaudit's own error: never a verdict on the target
                run.show.line(f"{run.heads[target.label]}: COULD NOT CHECK: ctxaudit's own "
                              f"error: {type(exc).__name__}: {_one_line(exc)}")  # fmt: skip
                run.unchecked = True
                continue
            run.show.line(
                f"{run.heads[target.label]}: {_status(report)} ({report.elapsed_s} s) -> "
                f"{options.out / target.label}/findings.md"
            )
            run.failed |= report.outcome == FAILS
            # a version that fails and also left something unchecked was not all checked
            run.unchecked |= (
                report.outcome == COULD_NOT_CHECK
                or bool(report.unchecked)
                or (report.outcome == HOLDS and not report.ok)
            )
    finally:  # interrupted: the versions not started never start
        pool.shutdown(wait=not procs.interrupted(), cancel_futures=True)


def _properties_of(run: _AuditRun, target: Described) -> TargetReport:
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
        with fix_patches.staged(report, options.out / target.label):  # the cache keeps them
            run.steps.store_properties(key, report, options.out)
        if report.fixed:
            run.clock.target(target.label).fixes_s = report.fixed.get("elapsed_s")
        return report
    finally:
        run.clock.target(target.label).properties_s = time.monotonic() - t0


def _mutation_phase(run: _AuditRun) -> None:
    """Phase 2: mutation, one target version at a time (each run uses every core); a
    line per version: its gate's verdict, or why mutation did not run."""
    for target in run.options.targets:
        why = _mutation_not_run(run, target)
        if why:
            run.show.line(f"{run.heads[target.label]}: mutation not run: {why}")
            continue
        _mutation_of(run, target)


def _mutation_not_run(run: _AuditRun, target: Described) -> str:
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


def _mutation_of(run: _AuditRun, target: Described) -> None:
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
    _gate_verdict(run, target, code, output, reused=hit is not None)


def _gate_verdict(run: _AuditRun, target: Described, code: int, output: str, reused: bool) -> None:
    """A version's mutation gate, said in a line and counted: passes (exit 0), fails
    (1), or could not check (any other exit)."""
    last = output.strip().splitlines()[-1:]
    verdict = {0: "mutation gate passes", 1: "mutation gate FAILS"}.get(
        code, f"COULD NOT CHECK: mutation could not run (exit {code}): "
        f"{last[0] if last else '(no output)'}"
    )  # fmt: skip
    if reused:
        verdict += " (reused: nothing it reads changed)"
    run.show.line(
        f"{run.heads[target.label]}: {verdict} -> {run.options.out / target.label}/mutation.md"
    )
    run.gates[target.label] = (code, verdict)
    run.failed |= code == 1
    run.unchecked |= code not in (0, 1)


def _finish(run: _AuditRun, accepted: dict[str, list[str]] | None) -> int:
    """The reports over every version (the matrix; JUnit XML and SARIF where asked
    for; the fixes' patches no report refers to removed), where the time went, and the
    exit code: 2 when something could not be checked, 1 when a property or a gate
    fails, else 0."""
    from ctxaudit.targets import get as get_target

    options = run.options
    fix_patches.prune(options.out)  # the patches no version's report refers to any more
    md_path, html_path = _write_matrix(options.out)
    print(f"ctxaudit: matrix of every version in {options.out}: {md_path.name}, {html_path.name}")
    done = [run.reports[t.label] for t in options.targets if t.label in run.reports]
    props = {t.kind: dict(get_target(t.kind).properties) for t in options.targets}
    try:  # what CI systems read; ctxaudit's own error here is no verdict
        _write_ci_files(run, done, props, accepted)
    except Exception as exc:  # noqa: BLE001
        print(f"ctxaudit: COULD NOT CHECK: writing the CI report files failed: "
              f"{type(exc).__name__}: {_one_line(exc)}", file=sys.stderr)  # fmt: skip
        run.unchecked = True
    clock = run.clock
    clock.total_s = time.monotonic() - run.started
    clock.mutation_wall_s = clock.total_s - clock.properties_wall_s
    if options.cache:
        print(f"ctxaudit: reused from {run.steps.store.directory}: {run.steps.summary()}")
    for report in done:
        print(f"ctxaudit: {report.target}-{report.version}: {summary(report)}")
    print(f"ctxaudit: where the time went: {clock.write(options.out)}")
    print(f"ctxaudit: done in {clock.total_s:.0f} s", flush=True)
    if run.unchecked:
        print("ctxaudit: COULD NOT CHECK everything (see the lines above): exit 2",
              file=sys.stderr)  # fmt: skip
        return 2
    return 1 if run.failed else 0


def summary(report: TargetReport) -> str:
    """One version in one line, as a release manager reads it: what holds, the known
    findings that reproduce and their fixes (and whether the fully fixed tree holds),
    and what is new."""
    held = [p for p, v in report.verdicts.items() if v == "holds"]
    known = [k for k in report.known if k.get("affects")]
    parts = ["holds " + (" ".join(held) if held else "nothing")]
    if known:
        props = sorted({p for k in known for p in str(k["property"]).split("/")})
        verified = sum(1 for f in report.fixes if f.get("status") == "fix verified")
        line = f"known {len(known)} finding(s) on {' '.join(props)}"
        if report.fixes:
            line += f", {verified} fix(es) verified"
        if report.fixed:
            line += ", the fully fixed tree " + (
                "holds" if report.fixed.get("ok") else "does not hold (see findings.md)"
            )
        parts.append(line)
    unchecked = [p for p, v in report.verdicts.items() if v == "could not check"]
    if unchecked:
        parts.append("could not check " + " ".join(unchecked))
    parts.append(f"new {len(report.findings)}" if report.findings else "new none")
    return " · ".join(parts)


def _write_ci_files(
    run: _AuditRun,
    done: list[TargetReport],
    props: dict[str, dict[str, str]],
    accepted: dict[str, list[str]] | None,
) -> None:
    """``--junit-xml`` and ``--sarif``, where asked for."""
    options = run.options
    if options.junit_xml is not None:
        from ctxaudit import junit

        doc = junit.document(done, props, run.gates, accepted)
        print(f"ctxaudit: JUnit XML: {junit.write(options.junit_xml, doc)}")
    if options.sarif is not None:
        from ctxaudit import sarif

        baseline = options.baseline
        reasons = {e.id: e.why for e in baseline.entries} if baseline else {}
        ok = {
            label: {i: reasons.get(i, "") for i in ids} for label, ids in (accepted or {}).items()
        }
        log = sarif.document(done, props, _locator(options.targets), ok)
        print(f"ctxaudit: SARIF: {sarif.write(options.sarif, log)}")


def _locator(targets: list[Described]) -> Any:
    """Where a known finding lives in a version, for SARIF: the first line its fix's
    form for the tree changes (None where there is no such form or tree)."""
    from ctxaudit import fixes as fixlib
    from ctxaudit import sarif
    from ctxaudit.targets import fixes as registered_fixes
    from ctxaudit.targets import get as get_target

    by_label = {t.label: t for t in targets}

    def locate(report: Any, finding: str) -> tuple[str, int] | None:
        described = by_label.get(f"{report.target}-{report.version}")
        fix = registered_fixes().get(finding)
        if described is None or fix is None:
            return None
        kind = get_target(described.kind)
        try:
            resolved = kind.resolve(described.spec, described.repo)
            form = fixlib.choose(fix, resolved.root, kind.fix_version(resolved))
        except (TargetError, fixlib.NotApplied):
            return None
        for edit in form.edits:
            where = sarif.edit_location(resolved.root, edit.path, edit.old)
            if where is not None:
                return where
        return None

    return locate


def _judged_by_baseline(baseline: Any, reports: list[TargetReport]) -> Any:
    """The properties' verdict under ``baseline`` (:class:`ctxaudit.baseline.Verdict`),
    said in a line each: it fails when a version fails beyond what it accepts, or an
    entry of it no longer reproduces."""
    from ctxaudit.baseline import judge

    verdict = judge(baseline, reports)
    name = baseline.path
    for label, ids in verdict.accepted.items():
        print(f"ctxaudit: {label}: accepted by the baseline {name}: {', '.join(ids)}")
    for label, why in verdict.failing.items():
        print(f"ctxaudit: {label}: FAILS beyond the baseline: {'; '.join(why)}")
    for entry in verdict.stale:
        print(f"ctxaudit: baseline {name}: {entry.id} no longer reproduces on any audited "
              f"{entry.target} version: remove it, so that its return fails the gate")  # fmt: skip
    if baseline.unreasoned():
        print(f"ctxaudit: baseline {name}: no reason given (why) for "
              f"{', '.join(baseline.unreasoned())}")  # fmt: skip
    return verdict


def _write_baseline(args: argparse.Namespace) -> int:
    """``ctxaudit baseline``: the audit's properties (no fix audit, no mutation, reports
    in a temporary folder), then the known findings that reproduce, written to
    ``--out`` whole; nothing is written when the audit could not check everything."""
    import json
    from types import SimpleNamespace

    from ctxaudit.baseline import write

    why = _check_file("--out", args.out)
    if why is not None:
        print(f"ctxaudit: {why}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="ctxaudit-baseline-") as tmp:
        argv = ["audit", "--no-mutation", "--no-fixes", "--profile", args.profile, "--out", tmp]
        for spec in args.target or default_targets():
            argv += ["--target", spec]
        for option in targets.repo_options():
            if getattr(args, option.dest, None):
                argv += [option.option, getattr(args, option.dest)]
        if args.seed is not None:
            argv += ["--seed", str(args.seed)]
        code = main(argv)
        if code not in (0, 1):
            print(f"ctxaudit: baseline not written: the audit did not check everything "
                  f"(exit {code})", file=sys.stderr)  # fmt: skip
            return code
        reports = [
            SimpleNamespace(**json.loads(p.read_text()))
            for p in sorted(Path(tmp).glob("*/findings.json"))
        ]
    entries = write(args.out, reports)
    new = sum(len(r.findings) for r in reports)
    ids = ", ".join(e.id for e in entries) or "none"
    print(f"ctxaudit: baseline {args.out}: {len(entries)} known finding(s) ({ids}); "
          "give each its reason (why)")  # fmt: skip
    if new:
        print(f"ctxaudit: {new} new finding(s) have no id and are not in the baseline: "
              "they fail the gate until fixed or registered", file=sys.stderr)  # fmt: skip
    return 0


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
