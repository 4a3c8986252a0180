"""The audit: run the property suites against targets and write reports.

Each target version runs in its own pytest process (versions never share
imported modules; :mod:`ctxaudit.suite_run`). For each one the audit writes
``reports/<target>-<version>/findings.json`` and ``findings.md``: every
property with its verdict and, for each finding, the minimal reproduction
Hypothesis shrank to.

Nothing here names a target: what a target is (its suites, properties, known findings,
the process its suites run in, its mutation scope) is asked of its
:class:`~ctxaudit.targets.base.Target` (``ctxaudit.targets.get(name)``). The mutation
audit runs ``python -m mutation`` in its own process
(:func:`ctxaudit.mutation_audit.run_mutation`, re-exported here).
"""

from __future__ import annotations

import json
import os
import random
import shlex
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ctxaudit import atomic, replay, targets
from ctxaudit.environment import IMPORT_VARIABLES, assignments
from ctxaudit.mutation_audit import MutationOptions as MutationOptions  # re-exported
from ctxaudit.mutation_audit import run_mutation as run_mutation  # re-exported
from ctxaudit.suite import REPO as REPO_ROOT
from ctxaudit.suite_run import Ticker, own_tests_runner, rootdir_of, run_pytest
from ctxaudit.target_report import Finding as Finding  # re-exported
from ctxaudit.target_report import TargetReport, heading, judge
from ctxaudit.target_report import extract_findings as extract_findings  # re-exported
from ctxaudit.targets.base import Described as Target  # re-exported: one target version
from ctxaudit.targets.base import TargetError as TargetError  # re-exported
from ctxaudit.templating import render

#: target name -> its properties (id -> short name); each target's own is
#: ``targets.get(name).properties``
PROPERTIES: dict[str, dict[str, str]] = targets.properties()


def parse_target(spec: str, repos: Mapping[str, Path | None] | None = None) -> list[Target]:
    """The target versions a ``--target`` spec names (``ctxaudit.targets.parse``; a
    target with a repository resolves its specs in ``repos[name]``). Raises
    TargetError."""
    return targets.parse(spec, repos)


def known_findings(target: Target, ticker: Ticker | None = None) -> list[dict[str, Any]]:
    """Phase 1: which of the target's known findings reproduce on this version (the
    target's ``findings_check``: for gitreins its regression tests, run with every known
    finding assumed; for lightspeed-stack each finding's fixed program)."""
    with tempfile.TemporaryDirectory(prefix="ctxaudit-") as tmp:
        check = targets.get(target.kind).findings_check(target, Path(tmp))
        if check is None:
            return []
        status, tests, output, _ = run_pytest(
            target, list(check.paths), "ci", None, dict(check.env), ticker
        )
        outcome = {t["nodeid"]: t["outcome"] for t in tests if t["when"] == "call"}
        unchecked = {t["nodeid"]: t["could_not_check"] for t in tests if t.get("could_not_check")}
        known = check.read(outcome)
        if status not in (0, 1) or not tests:
            why = "the known findings' check did not run: " + _tail(output)
            unchecked = {k["repro"]: why for k in known}
        for entry in known:  # a check that never reached its test's call tells nothing
            if not entry["affects"] and not _ran(entry["repro"], outcome):
                why = _not_run(entry["repro"], tests)
                unchecked.setdefault(entry["repro"], why)
        for entry in known:
            cause = entry.get("could_not_check") or unchecked.get(entry["repro"])
            if cause:  # neither reproduces nor does not: ctxaudit could not tell
                entry.update(affects=False, could_not_check=cause)
        return known


def _ran(repro: str, outcome: Mapping[str, str]) -> bool:
    """A known finding's check reached the call of its test (``repro``: its node id, or
    the file or the parametrized test that holds it)."""
    return any(n == repro or n.startswith((repro + "::", repro + "[")) for n in outcome)


def _not_run(repro: str, tests: list[dict[str, Any]]) -> str:
    """Why a known finding's check did not run, in words."""
    mine = [t for t in tests if t["nodeid"] == repro or t["nodeid"].startswith(repro + "[")]
    skipped = [t for t in mine if t["outcome"] == "skipped"]
    if skipped:
        return f"its check was skipped in its {skipped[0]['when']}, so it did not run"
    return f"its check's test {repro} did not run"


def _tail(output: str, lines: int = 5) -> str:
    return " | ".join(output.strip().splitlines()[-lines:]) or "(no output)"


def suite_error(errors: Sequence[str], output: str) -> str:
    """Why a suite did not run, in one line: its first collection error (the exception
    and where it was raised), else the end of pytest's output."""
    if not errors:
        return _tail(output)
    more = f" (and {len(errors) - 1} more collection error(s))" if len(errors) > 1 else ""
    return errors[0] + more


def run_target(
    target: Target,
    profile: str,
    seed: int | None,
    out_root: Path,
    progress: Callable[[str, str], None] | None = None,
    fixed_seeds: Sequence[int] = (),
) -> TargetReport:
    """Run the target's suites in their own processes and write its reports.
    ``fixed_seeds``: more seeds for the fully fixed tree of the fix audit.

    Phase 1 learns which known findings reproduce on this version; phase 2
    runs every property with exactly those regions left out, so what fails
    there is new."""

    def phase(name: str) -> Ticker | None:
        return None if progress is None else (lambda t: progress(name, t))

    kind = targets.get(target.kind)
    started = time.monotonic()
    try:
        known = known_findings(target, phase("known findings"))
        affecting = ",".join(k["id"] for k in known if k["affects"])
        env = {"CTXAUDIT_FINDINGS": affecting} if kind.excludes_known else {}
        reached: list[dict[str, Any]] = []
        ran_in: dict[str, str] = {}
        errors: list[str] = []
        status, tests, output, elapsed = run_pytest(
            target, list(kind.suites), profile, seed, env, phase("properties"), reached, ran_in,
            errors,
        )  # fmt: skip
    except Exception as exc:  # noqa: BLE001 - an environment that does not build, a bug
        # of ours: the suite never ran, so nothing is known of the target
        why = f"ctxaudit could not run the suite: {type(exc).__name__}: {exc}"
        report = unchecked_report(target, profile, seed, time.monotonic() - started, why)
        write_reports(report, out_root)
        return report
    report = TargetReport(
        target=target.kind,
        version=target.version,
        spec=target.spec,
        profile=profile,
        seed=seed,
        elapsed_s=round(elapsed, 1),
        exit_status=status,
        tests=tests,
        known=known,
        shapes=reached,
        environment=ran_in,
    )
    if status not in (0, 1) or not tests:
        why = f"the suite did not run (pytest exit {status}): {suite_error(errors, output)}"
        report.unchecked.append({"nodeid": "-", "properties": list(kind.properties), "why": why})
    judge(report, dict(kind.properties))
    # a tree ctxaudit could not drive at all has nothing a fix could be verified against
    drove = any(t["outcome"] == "passed" for t in tests)
    if kind.fix_audit and drove and tests:
        # --no-fixes verifies no fix, but still tells which failures the known findings
        # explain: what is new must not depend on whether the fixes are verified
        only = os.environ.get("CTXAUDIT_FIXES") == "0"
        run_fix_audit(target, report, out_root, phase("fixes"), fixed_seeds, only)
    write_reports(report, out_root)
    return report


def unchecked_report(
    target: Target, profile: str, seed: int | None, elapsed: float, why: str
) -> TargetReport:
    """The report of a version ctxaudit could not check at all, and why: every property
    could-not-check, nothing held or failed."""
    kind = targets.get(target.kind)
    report = TargetReport(
        target.kind, target.version, target.spec, profile, seed, round(elapsed, 1),
        exit_status=2,
    )  # fmt: skip
    report.unchecked.append({"nodeid": "-", "properties": list(kind.properties), "why": why})
    judge(report, dict(kind.properties))
    return report


def run_fix_audit(
    target: Target,
    report: TargetReport,
    out_root: Path,
    ticker: Ticker | None = None,
    fixed_seeds: Sequence[int] = (),
    attribution_only: bool = False,
) -> None:
    """The fix audit (``ctxaudit/fixaudit/``): each fix verified, every property on
    the fully fixed tree, each failure attributed (``attribution_only``: only the
    last). Each pytest run is its own process."""
    from ctxaudit.fixaudit import fix_audit
    from ctxaudit.fixaudit.state import FixAuditOptions

    def run(
        tree: str, paths: list[str], env: dict[str, str], replays: dict[str, list[str]]
    ) -> list[dict[str, Any]]:
        env = {**env, **replay.environ(replays)}
        seed = int(env.pop("CTXAUDIT_SEED")) if "CTXAUDIT_SEED" in env else report.seed
        fixed = Target(target.kind, tree, target.version, target.repo)
        return run_pytest(fixed, paths, report.profile, seed, env)[1]

    kind = targets.get(target.kind)
    resolved = kind.resolve(target.spec, target.repo)
    own = os.environ.get("CTXAUDIT_OWN_TESTS") == "1"  # --own-tests (on with --release)
    options = FixAuditOptions(
        list(kind.suites), dict(kind.properties), out_root / target.label, ticker,
        seeds=fixed_seeds, version_name=kind.fix_version(resolved),
        leave_out=lambda ids: kind.copy_env(resolved, ids), fixed_suites=kind.fixed_suites,
        attribution_only=attribution_only,
        own_tests=own_tests_runner(target, ticker) if own else None,
    )  # fmt: skip
    fix_audit(report, resolved.root, run, options)


@dataclass(frozen=True)
class AttributeRequest:
    """``ctxaudit attribute``'s arguments: ``spec`` names one version of a target with a
    fix audit, as the report's command does (the target's ``attribute_args``), resolved
    in its repository (``repos``) where it has one; ``fix`` the finding whose fix is
    tried; ``test`` the failing test's node id and ``blob`` its example (the bytes
    literal of its ``@reproduce_failure``; None: a plain rerun); ``profile`` and
    ``seed`` the runs'."""

    spec: str
    fix: str
    test: str
    blob: str | None = None
    profile: str = "ci"
    seed: int | None = None
    repos: Mapping[str, Path | None] | None = None


def run_attribute(request: AttributeRequest) -> int:
    """``ctxaudit attribute``: rerun one attribution of the fix audit (the regions left
    out are ``CTXAUDIT_FINDINGS``, as the report's command sets them). Exit 0 when the
    fix explains the failure, 1 when not, 2 on bad usage (one line, before any work:
    a blob that is no example, a test whose file is not in the suites) or when
    ctxaudit could not check (a run that did not happen or ended in its own error)."""
    from ctxaudit.attribution import EXPLAINED, NOT_EXPLAINED, Attribution, attribute, blob_error

    try:
        (target,) = [
            t for t in parse_target(request.spec, request.repos) if targets.get(t.kind).fix_audit
        ]
    except (TargetError, ValueError) as exc:
        why = f" ({exc})" if isinstance(exc, TargetError) else ""
        print(
            "ctxaudit: attribute needs one version of a target with a fix audit ("
            + ", ".join(t.name for t in targets.all_targets() if t.fix_audit)
            + f"), got {request.spec!r}{why}",
            file=sys.stderr,
        )
        return 2
    fix = targets.fixes().get(request.fix)
    if fix is None:
        print(f"ctxaudit: no fix for {request.fix!r} in any target's fixes", file=sys.stderr)
        return 2
    bad = blob_error(request.blob) if request.blob is not None else None
    path = request.test.partition("::")[0]
    if bad is None and not (REPO_ROOT / path).is_file():
        bad = f"no test file {path!r} in ctxaudit's suites ({REPO_ROOT})"
    if bad is not None:
        print(f"ctxaudit: {bad}", file=sys.stderr)
        return 2
    kind = targets.get(target.kind)
    resolved = kind.resolve(target.spec, target.repo)
    leave_out = [i for i in os.environ.get("CTXAUDIT_FINDINGS", "none").split(",") if i != "none"]
    env = kind.copy_env(resolved, [i for i in leave_out if i])

    def run(
        tree: str, paths: list[str], env: dict[str, str], replays: dict[str, list[str]]
    ) -> list[dict[str, Any]]:
        env = {**env, **replay.environ(replays)}
        copy = Target(target.kind, tree, target.version, target.repo)
        return run_pytest(copy, paths, request.profile, request.seed, env)[1]

    one = Attribution(
        resolved.root, kind.fix_version(resolved), fix, request.test, request.blob, env
    )
    text, outcome = attribute(one, run)
    print(text)
    return {EXPLAINED: 0, NOT_EXPLAINED: 1}.get(outcome, 2)


def write_reports(report: TargetReport, out_root: Path) -> Path:
    out = out_root / f"{report.target}-{report.version}"
    out.mkdir(parents=True, exist_ok=True)
    payload = asdict(report)
    payload["ok"] = report.ok
    payload["outcome"] = report.outcome
    payload.pop("tests")
    payload["tests"] = [{k: v for k, v in t.items() if k != "longrepr"} for t in report.tests]
    # each known finding's command, as the matrix prints it
    payload["known"] = [
        {**k, "reproduce": report.printed(reproduce_command(report, k))} for k in report.known
    ]
    # each new finding's rerun and the replay of its example, as findings.md prints them
    # (and the maintainers' pytest plugin, which reads this file)
    payload["findings"] = [
        {
            **asdict(f),
            "command": report.printed(rerun_command(report, f.test)),
            "replay": report.printed(example_command(report, f)),
        }
        for f in report.findings
    ]
    # both or neither: a findings.md never sits beside another run's findings.json
    atomic.write_texts(
        {
            out / "findings.json": json.dumps(payload, indent=2) + "\n",
            out / "findings.md": render_markdown(report),
        }
    )
    return out


def replace_with_unchecked(report: TargetReport, out_root: Path) -> str | None:
    """Put ``report`` (:func:`unchecked_report`: a version this run could not finish)
    where the version's reports go, so that none claims a verdict this run did not
    reach (an earlier run's, say). Where it cannot be written, the earlier reports are
    removed; why neither could be done, or None."""
    try:
        write_reports(report, out_root)
        return None
    except OSError:
        pass
    folder = out_root / f"{report.target}-{report.version}"
    for name in ("findings.json", "findings.md"):  # the JSON first: the matrix reads it
        try:
            (folder / name).unlink(missing_ok=True)
        except OSError as exc:
            return f"{folder / name} could not be removed ({exc.strerror or exc})"
    return None


def render_markdown(report: TargetReport) -> str:
    """findings.md (template ``ctxaudit/templates/findings.md.j2``)."""
    kind = targets.get(report.target)
    return render(
        "findings.md.j2",
        r=report,
        names=dict(kind.properties),
        heading=heading,
        rerun=lambda nodeid: rerun_command(report, nodeid),
        example=lambda finding: example_command(report, finding),
        reproduce=lambda known: reproduce_command(report, known),
        registry=kind.findings_registry,
    )


def rerun_command(report: TargetReport, nodeid: str) -> str:
    """The command that reruns one test against this target, same profile and seed (and,
    where the target's suites leave them out, the same known findings' regions)."""
    kind = targets.get(report.target)
    cmd = f"CTXAUDIT_PROFILE={report.profile} bin/ctxaudit test "
    cmd += " ".join(_test_args(kind, nodeid, report.spec))
    if kind.excludes_known:
        affecting = ",".join(k["id"] for k in report.known if k["affects"])
        cmd = f"CTXAUDIT_FINDINGS={affecting or 'none'} {cmd}"
    if report.seed is not None:
        cmd += f" --hypothesis-seed={report.seed}"
    # run with the import variables the audit's suites ran with (another Hypothesis first
    # on PYTHONPATH draws other examples): the rerun reproduces what the report says
    recorded = {k: v for k, v in report.environment.items() if k in IMPORT_VARIABLES}
    lead = assignments(recorded)
    return f"{lead} {cmd}" if lead else cmd


def example_command(report: TargetReport, finding: Finding) -> str:
    """The rerun command of ``finding``'s test that runs its shrunk example alone
    (``--replay``, the blob of the ``@reproduce_failure`` Hypothesis printed), or ""
    where Hypothesis printed none (the rerun then searches again, same seed)."""
    from ctxaudit.replay import blob_text, parse_blob

    found = parse_blob(finding.reproduction)
    if found is None:
        return ""
    return f"{rerun_command(report, finding.test)} --replay={blob_text(found[1])}"


def reproduce_command(report: TargetReport, known: Mapping[str, Any]) -> str:
    """The command that runs a known finding's regression test against this version (in
    its environment, where the target has one: ``tests/inenv_route.py``), with the
    finding assumed registered for it; it passes while the finding reproduces."""
    kind = targets.get(report.target)
    args = " ".join(_test_args(kind, str(known["repro"]), report.spec))
    return f"CTXAUDIT_FINDINGS={known['id']} CTXAUDIT_PROFILE=ci bin/ctxaudit test {args}"


def _test_args(kind: targets.Target, nodeid: str, spec: str) -> list[str]:
    """``bin/ctxaudit test`` arguments that run one test of ``kind``'s suites from any
    folder: a suite outside ctxaudit's files (a target package's own) has its node ids
    counted from its own folder, so the test is named by its whole path and counted
    from there (as the audit ran it)."""
    root = rootdir_of(list(kind.suites))
    if root is None:
        return kind.rerun_args(nodeid, spec)
    return [*kind.rerun_args(str(root / nodeid), spec), shlex.quote(f"--rootdir={root}")]


def pick_seed(profile: str, seed: int | None) -> int | None:
    from ctxaudit.profiles import PROFILES

    if seed is not None:
        return seed
    if PROFILES[profile].get("derandomize"):
        return None
    return random.SystemRandom().randrange(2**32)


def previous_elapsed(out_root: Path, target: Target, profile: str) -> float | None:
    """How long the last audit of this target version took (for the progress display)."""
    path = out_root / target.label / "findings.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return float(data["elapsed_s"]) if data.get("profile") == profile else None
