"""ctxaudit command line.

    ctxaudit audit [--target SPEC]... [--release] [--profile ci|thorough] [--seed N]
                   [--out DIR] [--mutation/--no-mutation] [--other-sample F] [--peer/--no-peer]
                   [--own-tests/--no-own-tests]
                   [--jobs N] [--since REV] [--baseline FILE] [--shard I/N]
    ctxaudit merge DIR... --out DIR [--junit-xml FILE] [--sarif FILE]
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
import os
import shlex
import sys
from pathlib import Path
from typing import Any, NoReturn

from ctxaudit import pipeline, targets
from ctxaudit.paths import IN_CHECKOUT, require_home, use_root
from ctxaudit.pipeline import default_targets
from ctxaudit.profiles import PROFILES, parse_seed


def _target_help() -> str:
    return f"{targets.forms()}; repeatable (default: {', '.join(default_targets())})"


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
    _add_merge_command(sub)
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
_RUNS = {"audit", "merge", "baseline", "attribute", *_PASSED_ON}


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
        help="the thorough release audit: the thorough profile, the mutation audit (with "
        "the peer suite) and the fixes against the target's own tests, unless --profile, "
        "--no-mutation or --no-own-tests say otherwise",
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
        default=pipeline.default_jobs(),
        metavar="N",
        help="property suites of N target versions at once (one core each); mutation runs "
        "one version at a time on every core (default: the number of cores)",
    )
    audit.add_argument(
        "--shard",
        type=_shard,
        metavar="I/N",
        help="run part I of N of the target versions (each version whole), split by the "
        "time each took in the audits recorded in reports/timing/ (by the order given where "
        "none is recorded): the same split on every machine; `ctxaudit merge` joins the "
        "parts' --out folders",
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
        "--own-tests",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="with the fixes, run the target's own tests where it declares some (the PyPI "
        "libraries') on the unfixed and the fully fixed trees: a fix must pass them except "
        "those it names as pinning the bug (minutes a version); default: on with --release",
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


def _shard(text: str) -> pipeline.Shard:
    try:
        return pipeline.parse_shard(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_merge_command(sub: Any) -> None:
    merge = sub.add_parser(
        "merge",
        help="join the --out folders of the parts of one sharded audit (audit --shard I/N) "
        "into one report folder: the verdicts, reports and matrix of one unsharded run",
    )
    merge.add_argument("dirs", nargs="+", type=Path, metavar="DIR", help="a part's --out folder")
    merge.add_argument("--out", type=Path, required=True, help="the merged report folder")
    merge.add_argument(
        "--junit-xml", type=Path, metavar="FILE", help="the verdicts as JUnit XML, as audit's"
    )
    merge.add_argument(
        "--sarif", type=Path, metavar="FILE", help="the findings as SARIF 2.1.0, as audit's"
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

        if pipeline.empty_spec([args.target]):
            parser.error(str(pipeline.empty_spec([args.target])))

        return _audit.run_attribute(
            _audit.AttributeRequest(
                args.target, args.fix, args.test, args.blob, args.profile, args.seed,
                _repos(args),
            )
        )  # fmt: skip
    if args.command == "merge":
        dirs = [d.resolve() for d in args.dirs]
        return pipeline.merge(dirs, args.out, args.junit_xml, args.sarif)
    if args.command == "baseline":
        return pipeline.write_baseline(
            pipeline.BaselineRequest(
                specs=list(args.target or []), repos=_repos(args), out=args.out,
                profile=args.profile, seed=args.seed, command=_command(argv),
            )
        )  # fmt: skip
    if args.command != "audit":
        parser.print_help()
        return 0 if args.command is None else 2
    try:  # what cannot start is said by the pipeline; options that clash, as parse errors
        return pipeline.audit(_audit_request(args, argv))
    except pipeline.BadUsage as exc:
        parser.error(str(exc))


def _command(argv: list[str] | None) -> str:
    """The command line as given, for the audit's time table."""
    return "ctxaudit " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))


def _audit_request(args: argparse.Namespace, argv: list[str] | None) -> pipeline.AuditRequest:
    """``audit``'s arguments as the pipeline takes them (checked there, before any work)."""
    return pipeline.AuditRequest(
        specs=list(args.target or []), repos=_repos(args), out=args.out,
        release=args.release, profile=args.profile, seeds=list(args.seed or []),
        jobs=args.jobs, mutation=args.mutation, other_sample=args.other_sample,
        peer=args.peer, mutate=args.mutate, fixes=args.fixes, cache=args.cache,
        own_tests=args.own_tests, since=args.since, baseline=args.baseline,
        junit_xml=args.junit_xml, sarif=args.sarif, command=_command(argv),
        shard=args.shard,
    )  # fmt: skip
