"""``python -m mutation run|merge ...`` - see mutation/README.md.

Exit codes: 0 the gate passes; 1 the gate fails (a verdict, and the only ones a cache
may keep); 2 bad usage or the run could not be made (a target that does not resolve,
a worker that failed); 3 ctxaudit's own error (an unexpected exception in our code:
one line saying so and the traceback on stderr, no gate verdict).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import traceback
from pathlib import Path
from typing import Any

from ctxaudit import targets
from ctxaudit.profiles import parse_seed
from ctxaudit.replay import invocation
from mutation import MutationError, MutationResult, merge, run
from mutation.catalogue import CatalogueError
from mutation.options import RunOptions


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"mutation: {message}", file=sys.stderr)
        raise SystemExit(2)


def _shard(text: str) -> tuple[int, int]:
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--shard wants I/N, got {text!r}") from None
    if not (n >= 1 and 1 <= i <= n):
        raise argparse.ArgumentTypeError(f"--shard {text}: need 1 <= I <= N")
    return i, n


def seeds_from(seed: int, k: int) -> list[int]:
    """The run's seeds: S, S+1, ..., S+K-1."""
    if seed < 0 or k < 1:
        raise MutationError(f"need --seed >= 0 and --seeds >= 1, got {seed} and {k}")
    return [seed + i for i in range(k)]


def _progress(rec: dict[str, Any]) -> None:
    ev = rec.get("event")
    if rec.get("suite") == "peer":
        if ev == "baseline":
            print(
                f"mutation: peer baseline {rec['tests']} tests in {rec['seconds']:.1f} s "
                f"({len(rec.get('failing', []))} fail unmutated and are left out)",
                file=sys.stderr,
            )
        return
    if ev == "peer":
        print(f"mutation: peer suite {rec['suite']}: {rec['tests']} test files", file=sys.stderr)
    elif ev == "cache":
        print(
            f"mutation: {rec['reused']} verdicts reused from .cache/mutation-verdicts, "
            f"{rec['run']} mutants to run",
            file=sys.stderr,
        )
    elif ev == "plan":
        print(
            f"mutation: {rec['target']} {rec['version']}: {rec['mutants']} of {rec['all']} mutants",
            file=sys.stderr,
        )
    elif ev == "baseline":
        print(f"mutation: baseline {rec['tests']} tests in {rec['seconds']:.1f} s", file=sys.stderr)
    elif ev == "result" and rec["status"] not in ("killed", "timeout"):
        print(
            f"  pass {rec['pass']} seed {rec.get('seed', 0)} {rec['status']}: {rec['id']}",
            file=sys.stderr,
        )


class _ProgressFile:
    """Keeps a one-line JSON status in a file for a caller's progress display: the
    suite's own lane (``phase``, ``done``, ``total``) and, while a peer suite runs beside
    it, the peer's (``peer``: "baseline", "mutants <done>/<total>" or "done")."""

    def __init__(self, path: Path, echo: bool) -> None:
        self.path, self.echo = path, echo
        self.state: dict[str, Any] = {"phase": "plan", "done": 0, "total": 0}
        self.peer_done = 0
        self.lock = threading.Lock()  # the peer reports from its own thread

    def __call__(self, rec: dict[str, Any]) -> None:
        with self.lock:
            self._take(rec)

    def _take(self, rec: dict[str, Any]) -> None:
        if self.echo:
            _progress(rec)
        ev, st = rec.get("event"), self.state
        if rec.get("suite") == "peer":  # the peer's worker
            if ev == "baseline":
                self.peer_done = 0
            elif ev == "result":
                self.peer_done += 1
            elif ev == "done":
                st["peer"] = "done"
            if ev in ("baseline", "result"):
                st["peer"] = f"mutants {self.peer_done}/{st['total']}"
        elif ev == "plan":
            st.update(total=rec["mutants"], phase="baseline")
        elif ev == "peer":
            st["peer"] = "baseline"
        elif ev == "baseline":
            st.update(phase="mutants", done=0)
        elif ev == "result":
            phase = {1: "mutants", 2: "recheck"}.get(rec["pass"], "seed recheck")
            st.update(phase=phase, done=st["done"] + 1 if st["phase"] == phase else 1)
        elif ev == "done":
            st.update(phase="finishing")
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(st))
        tmp.replace(self.path)


#: the exit code of a run that ended in ctxaudit's own error (never a gate verdict)
OWN_ERROR = 3


#: the exit code of a run that was interrupted (SIGINT): no verdict, nothing written
INTERRUPTED = 130


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("mutation: interrupted: no verdict, no report written", file=sys.stderr)
        return INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - ctxaudit's own error, never a verdict
        print(
            f"mutation: ctxaudit's own error, not a verdict on the target (exit {OWN_ERROR}): "
            f"{type(exc).__name__}: {exc}".splitlines()[0],
            file=sys.stderr,
        )
        traceback.print_exc(file=sys.stderr)
        return OWN_ERROR


def _add_target_options(r: argparse.ArgumentParser) -> None:
    """Each mutated target's spec option (``--gitreins SPEC``) and repository option
    (``--lightspeed-repo PATH``), from the registry."""
    seen: set[str] = set()
    for t in targets.mutated():
        scope = t.mutation
        if scope is not None and scope.spec_option and scope.spec_option not in seen:
            seen.add(scope.spec_option)
            r.add_argument(scope.spec_option, metavar="SPEC", default="", help=scope.spec_help)
        if t.repo is not None and t.repo.option not in seen:
            seen.add(t.repo.option)
            r.add_argument(t.repo.option, metavar="PATH", help=t.repo.help)


def _dest(option: str) -> str:
    return option.lstrip("-").replace("-", "_")


def _target_spec(p: argparse.ArgumentParser, a: argparse.Namespace) -> str:
    """The spec of ``--target``'s version (its own option; "" for its default). An
    option of another target is a usage error; a repository option is passed on to the
    target through its environment variable (the worker reads it too)."""
    chosen = targets.get(a.target)
    own = chosen.mutation.spec_option if chosen.mutation else None
    own_repo = chosen.repo.option if chosen.repo else None
    for t in targets.mutated():
        spec_option = t.mutation.spec_option if t.mutation else None
        if spec_option and spec_option != own and getattr(a, _dest(spec_option), ""):
            p.error(f"{spec_option} is for --target {t.name}")
        if t.repo is not None and t.repo.option != own_repo and getattr(a, t.repo.dest, None):
            p.error(f"{t.repo.option} is for --target {t.name}")
    if chosen.repo is not None and getattr(a, chosen.repo.dest, None):
        os.environ[chosen.repo.env] = str(Path(getattr(a, chosen.repo.dest)).resolve())
    return str(getattr(a, _dest(own), "") or "") if own else ""


def build_parser() -> argparse.ArgumentParser:
    """``python -m mutation``'s parser (``ctxaudit mutation``): the ``run`` and ``merge``
    commands."""
    p = _Parser(prog=f"{invocation()} mutation")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
    r = sub.add_parser("run", help="mutate a target and run its suite against every mutant")
    r.add_argument("--target", required=True, choices=[t.name for t in targets.mutated()])
    _add_target_options(r)
    _add_run_options(r)
    _add_selection_options(r)
    _add_seed_options(r)
    _add_fix_and_cache_options(r)
    m = sub.add_parser("merge", help="combine shard results into one report and gate")
    m.add_argument("paths", nargs="+", type=Path)
    m.add_argument("--out", type=Path)
    return p


def _add_run_options(r: argparse.ArgumentParser) -> None:
    """``run``'s options of how the run is made: the shard, where the report goes, how
    many mutants at a time, which rerun, whether coverage is measured."""
    r.add_argument("--shard", type=_shard, metavar="I/N")
    r.add_argument("--out", type=Path, help="report folder (default reports/<target>-<version>)")
    r.add_argument("--jobs", type=int, default=2)
    r.add_argument("--recheck", choices=["gated", "survivors", "all", "none"], default="gated")
    r.add_argument("--no-coverage", action="store_true")


def _add_selection_options(r: argparse.ArgumentParser) -> None:
    """``run``'s options of which mutants run against which tests (and the peer's too),
    and of the progress file."""
    r.add_argument(
        "--other-sample",
        type=float,
        default=1.0,
        metavar="F",
        help="run only this deterministic fraction of the 'other' mutants (default 1)",
    )
    r.add_argument(
        "--peer",
        action="store_true",
        help="also run the same mutants against the target's own tests (gitreins: its "
        "sdist's tests/) and report both scores and times side by side; never gated",
    )
    r.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="GLOB",
        help="run only the mutants whose id matches (fnmatch; repeatable), e.g. to rerun one",
    )
    r.add_argument(
        "--tests",
        action="append",
        default=[],
        metavar="PATH",
        help="run only this part of the target's suite (a test file or node id inside its "
        "configured tests; repeatable), e.g. the fixed programs for a quick check; the "
        "report says so",
    )
    r.add_argument(
        "--progress-file",
        type=Path,
        metavar="PATH",
        help="keep a one-line JSON status (phase, done, total) in PATH while running",
    )


def _add_seed_options(r: argparse.ArgumentParser) -> None:
    """``run``'s options of the Hypothesis seeds: pass 1's and how many a kill needs."""
    r.add_argument(
        "--seed",
        type=parse_seed,
        default=0,
        metavar="S",
        help="Hypothesis seed of pass 1 (default 0: the mutation profile's derandomized "
        "examples); the recheck uses S+1 .. S+K-1",
    )
    r.add_argument(
        "--seeds",
        type=int,
        default=3,
        metavar="K",
        help="check each detected gated mutant under K seeds; only robust kills pass the "
        "gate (default 3; 1 turns the check off)",
    )


def _add_fix_and_cache_options(r: argparse.ArgumentParser) -> None:
    """``run``'s options of the fixed tree, the verdict cache and the output's volume."""
    r.add_argument(
        "--fix",
        action="append",
        default=[],
        metavar="FINDING",
        help="mutate a copy of the tree with this finding's fix applied (its target's fixes; "
        "repeatable; 'all': every fix for the version): the fixed findings' regions are "
        "checked too. A fix that does not apply is an error",
    )
    r.add_argument(
        "--no-cache",
        action="store_true",
        help="neither reuse nor store verdicts in .cache/mutation-verdicts/",
    )
    r.add_argument("-q", "--quiet", action="store_true")


def _main(argv: list[str] | None) -> int:
    """Parse, run or merge, print the result's summary; the exit code (module docstring)."""
    p = build_parser()
    a = p.parse_args(argv)
    try:
        res = _run(p, a) if a.cmd == "run" else merge(a.paths, a.out)
    except (MutationError, CatalogueError) as exc:
        print(f"mutation: {exc}", file=sys.stderr)
        return 2
    print(res.summary_line())
    html = res.report_json.with_name("mutation.html") if res.report_json else None
    for path in (res.report_json, res.report_md, html, res.shard_file):
        if path and path.exists():
            print(f"  {path}")
    if res.unchecked:
        why = "; ".join(res.errors[:2]) or "gated mutants have no verdict"
        print(f"mutation: could not check the gate (no verdict, not a failure): {why}",
              file=sys.stderr)  # fmt: skip
        return 2
    return 0 if res.gate_passed else 1


def _run(p: argparse.ArgumentParser, a: argparse.Namespace) -> MutationResult:
    """``run``: the target's spec and report folder from the options, then the run."""
    spec = _target_spec(p, a)
    out = a.out
    if out is None:
        from mutation import resolve_target

        _root, version, _d = resolve_target(a.target, spec)
        out = Path("reports") / f"{a.target}-{version}"
    return run(a.target, spec, out, _run_options(a))


def _run_options(a: argparse.Namespace) -> RunOptions:
    """The run's options (:class:`RunOptions`) from ``run``'s parsed arguments."""
    return RunOptions(
        shard=a.shard,
        progress=(
            _ProgressFile(a.progress_file, not a.quiet)
            if a.progress_file
            else (None if a.quiet else _progress)
        ),
        jobs=a.jobs,
        recheck=a.recheck,
        coverage=not a.no_coverage,
        other_sample=a.other_sample,
        peer=a.peer,
        only=tuple(a.only),
        seeds=tuple(seeds_from(a.seed, a.seeds)),
        cache=not a.no_cache,
        fixes=tuple(a.fix),
        tests=tuple(a.tests),
    )


if __name__ == "__main__":
    raise SystemExit(main())
