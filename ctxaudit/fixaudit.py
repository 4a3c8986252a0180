"""The fix audit of one target version: verify each known finding's fix,
check every property on the fully fixed tree over the whole input space, and
attribute each failure of the unfixed tree to the finding whose fix explains it.

1. Each known finding that reproduces on the version gets its fix (its target's ``fixes`` package)
   applied alone to a copy of the tree, in the form the tree's text takes
   (``ctxaudit.fixes.choose``: the first form whose edits all apply; the version only
   orders the tries). Its regression test asserts the finding, so the fix is verified
   when that test passes without the fix (phase 1) and fails with an ``AssertionError``
   with it. A fix none of whose forms applies is reported with, per form, the edit that
   did not match.
2. All fixes that apply together make the *fully fixed* tree; every suite runs on it
   with no region left out (``CTXAUDIT_FINDINGS=none``, or the target's own variable:
   ``Target.copy_env``), same profile and seed; only a finding no fix can be verified
   for on the version (a form with a ``reason``) keeps its region out. What
   fails there is new. Each such failure is replayed on the fully fixed tree minus one
   fix at a time: a fix whose removal makes it pass *breaks* that property.
3. Each failure of the unfixed tree is replayed (its shrunk example, ``ctxaudit.replay``;
   a test without one is rerun) on each single-fix tree. The findings whose fix makes
   it pass own it; a failure no single fix explains stays new, and says so.

A replay is only evidence when it is the same example and it fails without the fix:
- each round of replays also runs on an unfixed copy of the tree (the *control*); a
  failure whose replay does not fail there with the same message (a rerun that passes
  alone, a failure that depended on the run it came from) is attributed to no fix, and
  says why. Before the control, such a rerun passed on every single-fix tree and was
  "explained" by fixes that touch nothing it runs;
- a replay "passes" only when it drew every choice of the example as recorded
  (``ctxaudit.replay.ran_through``): a state machine whose failing step now passes runs
  out of data right after it, which counts; a replay that misaligned does not.

Three outcomes, never confused: a test record with a ``could_not_check`` key (ctxaudit's
own error in that run: its harness, an environment; ``ctxaudit/pytest_results.py``) is
no evidence either way. A regression run that ended so leaves its fix "not verified:
could not check (why)", never verified nor "does not make the property hold"; a replay
that ended so explains nothing and reproduces nothing; on the fully fixed tree the
properties of such tests are "could not check" (``judge``), and the tree is not "ok".

Each attribution can be rerun alone: ``bin/ctxaudit attribute``
(:func:`ctxaudit.attribution.attribute`) builds the unfixed and the single-fix copies and
replays the example on both.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ctxaudit import fix_patches
from ctxaudit import fixes as fixlib
from ctxaudit.attribution import Runner, attribute_command, ran_clean, records, unchecked_why
from ctxaudit.outcomes import COULD_NOT_CHECK, FAILS
from ctxaudit.replay import parse_blob
from ctxaudit.target_report import Finding, TargetReport, extract_findings, heading, judge

Ticker = Callable[[str], None]
# runs pytest: (tree spec, paths, env, replays {nodeid: [version, blob]}) -> tests
# the environment of a run on a copy of the tree that leaves out these findings' regions
LeaveOut = Callable[[Sequence[str]], dict[str, str]]

VERIFIED = "fix verified"


def _reproduced(test: dict[str, Any] | None, failure: Finding) -> bool:
    """The replay failed with the failure's own message (the control, on the unfixed tree)."""
    if test is None or unchecked_why(test) or test["outcome"] != "failed" or ran_clean(test):
        return False
    text = test.get("longrepr", "")
    if "DidNotReproduce" in text:
        return False
    return any(g.message == failure.message for g in extract_findings(test)) or (
        bool(failure.message) and failure.message[:120] in text
    )


def _rounds(failures: list[Finding]) -> list[dict[str, tuple[int, list[str]]]]:
    """Replays grouped so a process replays each test once: [{nodeid: (index, blob)}]."""
    rounds: list[dict[str, tuple[int, list[str]]]] = []
    for i, f in enumerate(failures):
        blob = parse_blob(f.reproduction)
        for r in rounds:
            if f.test not in r:
                r[f.test] = (i, list(blob) if blob else [])
                break
        else:
            rounds.append({f.test: (i, list(blob) if blob else [])})
    return rounds


def _replay(
    run: Runner, tree: str, failures: list[Finding], env: dict[str, str], extra: list[str]
) -> tuple[list[bool], dict[str, dict[str, Any]]]:
    """Which failures pass on ``tree`` (each replayed once), and the outcomes of ``extra``."""
    got, extra_out = _replayrecords(run, tree, failures, env, extra)
    return [ran_clean(t) for t in got], extra_out


def _replayrecords(
    run: Runner, tree: str, failures: list[Finding], env: dict[str, str], extra: list[str]
) -> tuple[list[dict[str, Any] | None], dict[str, dict[str, Any]]]:
    """Each failure's replayed test outcome on ``tree``, and the outcomes of ``extra``."""
    passed: list[dict[str, Any] | None] = [None] * len(failures)
    extra_out: dict[str, dict[str, Any]] = {}
    rounds = _rounds(failures) or [{}]
    for n, r in enumerate(rounds):
        paths = list(r) + (extra if n == 0 else [])
        if not paths:
            continue
        replays = {nodeid: blob for nodeid, (_, blob) in r.items() if blob}
        got = records(run(tree, paths, env, replays))
        for nodeid, (i, _) in r.items():
            passed[i] = got.get(nodeid)
        if n == 0:
            extra_out = {p: got[p] for p in extra if p in got}
    return passed, extra_out


@dataclasses.dataclass(frozen=True)
class FixAuditOptions:
    """What one fix audit runs and where it writes (:func:`fix_audit`).

    ``suites``: what runs on the fully fixed tree (unless ``fixed_suites``); ``props``
    the target's properties (id -> name); ``out_dir`` the version's report folder (the
    patches go beside it, once per target: ``ctxaudit.fix_patches``);
    ``ticker`` gets a status line as each step starts; ``fixes`` the fixes by finding
    id (default: the registry's, ``ctxaudit.targets.fixes()``).

    ``seeds``: more Hypothesis seeds for the fully fixed tree; its suites run once under
    the report's seed and once under each of these (``CTXAUDIT_SEED`` in the runner's
    environment), and a property holds there only when it holds under every one.

    What differs between targets comes from the target (``ctxaudit.targets``), never
    from its name: ``version_name`` is the name that orders the forms a fix tries (the
    forms that name it first; each fix takes the first form whose edits apply to the
    tree: ``ctxaudit.fixes.choose``) and chooses a form with a ``reason``
    (``Target.fix_version``; default the report's version), ``leave_out`` the
    environment of a run on a copy of the tree that leaves out the given findings'
    regions (``Target.copy_env``; default ``CTXAUDIT_FINDINGS``), ``fixed_suites`` what
    runs on the fully fixed tree (``Target.fixed_suites``; default ``suites``).

    ``left_out``: the findings whose regions the run of the unfixed tree left out
    (default: every known finding that affects the version, as the audit's properties
    phase does); the replays of its failures leave out the same, and so does the
    command that reruns an attribution.

    ``attribution_only``: only tell the unfixed tree's failures known from new
    (``--no-fixes``: :func:`attribute_failures`), so that the known/new split does not
    depend on whether the fixes are verified; no fix is verified, no fully fixed tree."""

    suites: Sequence[str]
    props: Mapping[str, str]
    out_dir: Path
    ticker: Ticker | None = None
    fixes: Mapping[str, fixlib.Fix] | None = None
    seeds: Sequence[int] = ()
    version_name: str | None = None
    leave_out: LeaveOut | None = None
    fixed_suites: Sequence[str] | None = None
    left_out: Sequence[str] | None = None
    attribution_only: bool = False


def fix_audit(report: TargetReport, root: Path, run: Runner, options: FixAuditOptions) -> None:
    """Add the fix audit to ``report`` (``fixes``, ``attributed``, ``fixed``), move the
    attributed failures out of ``report.findings`` and write the fixes' patches (each
    text once per target, ``ctxaudit.fix_patches``; the report links to them).

    The steps, each named below: the single-fix trees (:func:`_single_fix_trees`); the
    control replays on an unfixed copy (:func:`_control`); each fix alone, its
    regression test and the failures' replays (:func:`_each_fix_alone`); the fully
    fixed tree (:func:`_fully_fixed_tree`) and the fixes that break it (:func:`_blame`);
    then the unfixed tree's failures attributed (:func:`_attribute_failures`) and the
    results recorded (:func:`_record`).

    A finding whose fix has, for this version, a form with a ``reason`` instead of
    edits cannot be fixed here: it is reported as "no fix" with that reason, and the
    fully fixed tree leaves out its region (only those; ``fixed["left_out"]``)."""
    if options.attribution_only:
        attribute_failures(report, root, run, options)
        return
    started = time.monotonic()
    failures = list(report.findings)
    with tempfile.TemporaryDirectory(prefix="ctxaudit-fix-") as tmp:
        audit = _start(report, root, run, options, Path(tmp))
        _single_fix_trees(audit)
        control = _control(audit, failures)
        owners = _each_fix_alone(audit, failures, control)
        fixed = _fully_fixed_tree(audit)
        _blame(audit, fixed)
    _attribute_failures(audit, failures, owners, control)
    _record(audit, fixed, round(time.monotonic() - started, 1))


def attribute_failures(
    report: TargetReport, root: Path, run: Runner, options: FixAuditOptions
) -> None:
    """Only the attribution of the fix audit (``--no-fixes``): each failure of the
    unfixed tree that a known finding's fix explains moves to ``report.attributed``, the
    others stay new, by the same evidence as :func:`fix_audit` (the control, then each
    single-fix tree). It stops trying fixes once every failure that reproduces on the
    control has an owner, and verifies no fix: ``report.fixes`` and ``report.fixed``
    stay empty, and no patch is written."""
    failures = list(report.findings)
    if not failures or not any(k["affects"] for k in report.known):
        return
    with tempfile.TemporaryDirectory(prefix="ctxaudit-attribute-") as tmp:
        audit = _start(report, root, run, options, Path(tmp), write_patches=False)
        _single_fix_trees(audit)
        control = _control(audit, failures)
        owners = _first_owners(audit, failures, control)
    _attribute_failures(audit, failures, owners, control)


def _first_owners(audit: _FixAudit, failures: list[Finding], control: _Control) -> list[list[str]]:
    """For each failure, the first finding whose fix alone makes its replay pass (among
    those whose replay reproduced on the control). The fixes of findings on a failure's
    properties are tried first; a failure with an owner is not replayed again."""
    owners: list[list[str]] = [[] for _ in failures]
    wanted = {p for f in failures for p in f.properties}
    by_property = {k["id"]: set(str(k["property"]).split("/")) for k in audit.affecting}
    order = sorted(audit.singles, key=lambda fid: not (by_property.get(fid, set()) & wanted))
    for n, fid in enumerate(order, 1):
        open_ = [i for i, f in enumerate(failures) if control.reproduces[i] and not owners[i]]
        if not open_:
            break
        audit.tick(f"attribution {n}/{len(order)} {fid}")
        tree = str(audit.singles[fid])
        passed, _ = _replay(audit.run, tree, [failures[i] for i in open_], audit.env, [])
        for i, ok in zip(open_, passed, strict=True):
            if ok:
                owners[i].append(fid)
    return owners


@dataclasses.dataclass
class _FixAudit:
    """One fix audit under way: its inputs, its resolved options, and what its steps
    found so far."""

    report: TargetReport
    root: Path
    run: Runner
    options: FixAuditOptions
    tmp: Path  # the copies of the tree are made here
    fixes: Mapping[str, fixlib.Fix]
    version: str  # the name that orders the forms a fix tries
    leave_out: LeaveOut
    unfixed_left_out: list[str]  # the regions the unfixed tree's run left out
    env: dict[str, str]  # the environment of its failures' replays
    affecting: list[dict[str, Any]]  # the known findings that reproduce on the version
    rows: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    singles: dict[str, Path] = dataclasses.field(default_factory=dict)  # id -> its fix alone
    unfixable: list[str] = dataclasses.field(default_factory=list)  # a form with a reason
    patches: dict[str, str] = dataclasses.field(default_factory=dict)  # text -> its link
    write_patches: bool = True  # False: attribution only, which links no patch

    def tick(self, text: str) -> None:
        if self.options.ticker:
            self.options.ticker(text)

    def write_patch(self, name: str, diff: str) -> str:
        """Write a patch of the version's (a fix's, or ``combined``) once for the target
        (``ctxaudit.fix_patches``); its link, relative to the version's report folder.
        A combined patch that is one fix's patch (one fix applied) is that fix's file."""
        if not self.write_patches:
            return ""
        if diff not in self.patches:
            out_root = self.options.out_dir.parent
            self.patches[diff] = fix_patches.write(out_root, self.report.target, name, diff)
        return self.patches[diff]


@dataclasses.dataclass
class _Control:
    """The unfixed tree's failures replayed on an unfixed copy (the control): each
    replay's outcome, and whether it failed as reported."""

    replayed: list[dict[str, Any] | None]
    reproduces: list[bool]


@dataclasses.dataclass
class _FixedTree:
    """The fully fixed tree: the fixes it applies, its patch and its properties."""

    applied: list[str]
    combined_patch: str  # its link, "" when no fix applied
    none_applied: str  # why no fix applied, in words ("" when one did)
    report: TargetReport  # its suites' run, judged
    seeds: list[int | None]


def _start(
    report: TargetReport,
    root: Path,
    run: Runner,
    options: FixAuditOptions,
    tmp: Path,
    write_patches: bool = True,
) -> _FixAudit:
    """The fix audit's options resolved (the registry's fixes, the version's name, the
    environment of the replays), and the patches an earlier run left in the version's
    own folder removed."""
    from ctxaudit import targets

    fixes = targets.fixes() if options.fixes is None else options.fixes
    leave_out = options.leave_out or _leave_out_findings
    affecting = [k for k in report.known if k["affects"]]
    left_out = options.left_out
    unfixed_left_out = [k["id"] for k in affecting] if left_out is None else list(left_out)
    fix_patches.clear_own(options.out_dir)
    return _FixAudit(
        report, root, run, options, tmp, fixes, options.version_name or report.version,
        leave_out, unfixed_left_out, leave_out(unfixed_left_out), affecting,
        write_patches=write_patches,
    )  # fmt: skip


def _single_fix_trees(audit: _FixAudit) -> None:
    """Each finding that reproduces on the version: its row, and a copy of the tree with
    its fix alone (its patch written), or why there is none: no fix, a form with a
    reason (the fully fixed tree leaves its region out), a fix that does not apply."""
    for k in audit.affecting:
        row = {"id": k["id"], "property": k["property"], "status": "", "detail": ""}
        audit.rows[k["id"]] = row
        fix = audit.fixes.get(k["id"])
        if fix is None:
            row["status"] = "no fix"
            row["detail"] = "its target's fixes hold no fix for this finding yet"
            continue
        try:  # the form the tree's text takes; a reason form is written for versions
            form: fixlib.Form | None = fixlib.choose(fix, audit.root, audit.version)
        except fixlib.NotApplied:
            form = None  # fixed_copy reports why
        if form is not None and form.reason:
            row["status"] = "no fix"
            row["detail"] = f"no fix can be verified on this version: {form.reason}"
            audit.unfixable.append(k["id"])
            continue
        got = fixlib.fixed_copy(audit.root, audit.tmp / k["id"], audit.version, [fix])
        if got.failed:
            row["status"] = "does not apply"
            row["detail"] = got.failed[fix.finding]
            continue
        audit.singles[k["id"]] = got.root
        if audit.write_patches:  # attribution alone links no patch: no diff to make
            row["patch"] = audit.write_patch(k["id"], fixlib.diff_trees(audit.root, got.root))
        row["why"] = fix.why


def _control(audit: _FixAudit, failures: list[Finding]) -> _Control:
    """The unfixed tree's failures replayed on an unfixed copy of the tree: a fix is
    judged by a replay only when it fails there with the failure's own message."""
    control = fixlib.fixed_copy(audit.root, audit.tmp / "unfixed", audit.version, []).root
    if failures:
        audit.tick("replays on the unfixed tree (control)")
    replayed, _ = _replayrecords(audit.run, str(control), failures, audit.env, [])
    reproduces = [_reproduced(t, f) for t, f in zip(replayed, failures, strict=True)]
    return _Control(replayed, reproduces)


def _each_fix_alone(
    audit: _FixAudit, failures: list[Finding], control: _Control
) -> list[list[str]]:
    """On each single-fix tree: the fix's regression test (its row's status) and the
    replays of the unfixed tree's failures. Returns, for each failure, the findings
    whose fix makes it pass (among those whose replay reproduced on the control)."""
    owners: list[list[str]] = [[] for _ in failures]
    repro = {k["id"]: k["repro"] for k in audit.affecting}
    for n, (fid, tree) in enumerate(audit.singles.items(), 1):
        audit.tick(f"fix {n}/{len(audit.singles)} {fid}")
        # the finding reproduces on this version (the audit's check): its regression
        # test holds it to, registered for the version or not
        assumed = {**audit.env, "CTXAUDIT_FINDINGS_ASSUMED": fid}
        passed, extra = _replay(audit.run, str(tree), failures, assumed, [repro[fid]])
        for i, ok in enumerate(passed):
            if ok and control.reproduces[i]:
                owners[i].append(fid)
        audit.rows[fid].update(_regression_status(extra.get(repro[fid])))
    return owners


def _regression_status(test: dict[str, Any] | None) -> dict[str, str]:
    """A fix's status and detail from its regression test's run with the fix alone: it
    is verified when the test fails on its assertion (the finding no longer
    reproduces)."""
    if test is None:
        return {"status": "not verified", "detail": "its regression test did not run"}
    if unchecked_why(test):  # no verdict either way: ctxaudit's own error
        return {"status": "not verified", "detail": f"could not check ({unchecked_why(test)})"}
    if test["outcome"] == "passed":
        return {
            "status": "does not make the property hold",
            "detail": "its regression test still reproduces the finding with the fix",
        }
    if test["outcome"] != "failed" or "AssertionError" not in test.get("longrepr", ""):
        return {"status": "not verified", "detail": _not_verified(test)}
    return {
        "status": VERIFIED,
        "detail": "regression test reproduces without the fix, not with it",
    }


def _fully_fixed_tree(audit: _FixAudit) -> _FixedTree:
    """Every fix that applies alone, applied together (its combined patch written):
    every suite runs on that tree over the whole input space, under each seed, and its
    properties are judged."""
    applied = [audit.fixes[fid] for fid in audit.singles]
    full = fixlib.fixed_copy(audit.root, audit.tmp / "all", audit.version, applied)
    for fid, why in full.failed.items():  # applies alone, not with the others
        row = audit.rows[fid]
        row["status"], row["detail"] = "does not apply", f"with the others: {why}"
    combined = fixlib.diff_trees(audit.root, full.root)
    link = audit.write_patch("combined", combined) if combined else ""
    none_applied = "" if full.applied else _why_no_fixes(audit.report, audit.rows)
    count = f"{len(full.applied)} fixes" + (f": {none_applied}" if none_applied else "")
    audit.tick(f"properties on the fixed tree ({count[:300]})")
    seeds = list(dict.fromkeys([audit.report.seed, *audit.options.seeds]))
    tests = _fixed_tree_tests(audit, full.root, seeds)
    r = audit.report
    fixed = TargetReport(
        target=r.target, version=audit.version, spec=str(full.root), profile=r.profile,
        seed=r.seed, elapsed_s=0.0, exit_status=0, tests=tests,
    )  # fmt: skip
    props = dict(audit.options.props)
    judge(fixed, props)
    if not tests:  # ctxaudit's run, not the tree: no verdict on any property
        why = "the suite did not run on the fixed tree"
        fixed.unchecked.append({"nodeid": "-", "properties": list(props), "why": why})
        fixed.verdicts = {p: COULD_NOT_CHECK for p in props}
    return _FixedTree(full.applied, link, none_applied, fixed, seeds)


def _fixed_tree_tests(
    audit: _FixAudit, tree: Path, seeds: list[int | None]
) -> list[dict[str, Any]]:
    """The suites' tests on the fully fixed tree, once under each seed (the regions of
    the findings no fix can be verified for left out)."""
    suites = list(audit.options.fixed_suites or audit.options.suites)
    tests: list[dict[str, Any]] = []
    for n, seed in enumerate(seeds, 1):
        if len(seeds) > 1:
            audit.tick(f"properties on the fixed tree, seed {seed} ({n}/{len(seeds)})")
        env = audit.leave_out(audit.unfixable)
        if seed != audit.report.seed and seed is not None:
            env["CTXAUDIT_SEED"] = str(seed)
        tests += audit.run(str(tree), suites, env, {})
    return tests


def _blame(audit: _FixAudit, fixed: _FixedTree) -> None:
    """Each failure of the fully fixed tree, replayed with one fix left out at a time: a
    fix whose removal makes it pass breaks it (and its row says so); a failure no
    removal explains is new."""
    findings = fixed.report.findings
    blamed: list[list[str]] = [[] for _ in findings]
    if findings and fixed.applied and fixed.report.tests:
        for fid in fixed.applied:
            rest = [audit.fixes[o] for o in fixed.applied if o != fid]
            other = fixlib.fixed_copy(audit.root, audit.tmp / f"all-but-{fid}", audit.version, rest)
            env = audit.leave_out(audit.unfixable)
            passed, _ = _replay(audit.run, str(other.root), findings, env, [])
            for i, ok in enumerate(passed):
                if ok:
                    blamed[i].append(fid)
    for f, who in zip(findings, blamed, strict=True):
        f.owners = who
        f.attribution = (
            "goes away when the fix of " + " or ".join(who) + " is left out"
            if who
            else "new: present with every fix and without each one"
        )
        for fid in who:
            if audit.rows[fid]["status"] in (VERIFIED, "not verified"):
                audit.rows[fid]["status"] = "breaks another property"
                audit.rows[fid]["detail"] = f"on the fixed tree: {heading(f)}"


def _attribute_failures(
    audit: _FixAudit, failures: list[Finding], owners: list[list[str]], control: _Control
) -> None:
    """The unfixed tree's failures: those a single fix explains move to
    ``report.attributed`` (with the command that reruns the attribution); the others
    stay new, and say why."""
    report = audit.report
    report.findings = []
    for i, f in enumerate(failures):
        f.owners = owners[i]
        if f.owners:
            f.attribution = "explained by the fix of " + " and of ".join(f.owners)
            f.rerun = attribute_command(report, f, f.owners[0], audit.unfixed_left_out)
            report.attributed.append(f)
        else:
            f.attribution = _why_new(control.replayed[i], control.reproduces[i], audit.singles)
            report.findings.append(f)


def _why_new(control_run: dict[str, Any] | None, reproduces: bool, tried: Iterable[str]) -> str:
    """Why a failure of the unfixed tree is attributed to no fix, in words."""
    if unchecked_why(control_run):
        return (
            "new: not attributed, ctxaudit could not check its replay on an unfixed copy "
            f"of the tree (the control: {unchecked_why(control_run)})"
        )
    if not reproduces:
        return (
            "new: not attributed, its replay does not fail on an unfixed copy of the "
            "tree (the control), so no fix can be judged by it"
        )
    return f"new: no single fix explains it (fixes tried: {', '.join(tried) or 'none applies'})"


def _record(audit: _FixAudit, fixed: _FixedTree, elapsed_s: float) -> None:
    """The report's ``fixes`` (a row per known finding) and ``fixed`` (the fully fixed
    tree's results)."""
    report = audit.report
    report.fixes = [
        {**audit.rows.get(k["id"], {}), "id": k["id"], "property": k["property"]}
        | ({} if k["affects"] else _not_affecting(k))
        for k in report.known
    ]
    tree = fixed.report
    report.fixed = {
        "applied": fixed.applied,
        "none_applied": fixed.none_applied,
        "combined_patch": fixed.combined_patch,
        "verdicts": tree.verdicts,
        "findings": [dataclasses.asdict(f) for f in tree.findings],
        "unchecked": tree.unchecked,
        "ok": (
            not tree.findings
            and not tree.unchecked  # its tests' properties read "could not check"
            and FAILS not in tree.verdicts.values()
        ),
        "seeds": fixed.seeds,
        "left_out": audit.unfixable,
        "elapsed_s": elapsed_s,
    }


def _not_affecting(known: dict[str, Any]) -> dict[str, str]:
    """The row of a known finding the audit did not see reproduce: not needed, or (its
    check was ctxaudit's own error) could not check."""
    why = known.get("could_not_check")
    if why:
        return {
            "status": "not verified",
            "detail": f"could not check whether it reproduces ({why})",
        }
    return {"status": "not needed", "detail": "does not reproduce"}


def _why_no_fixes(report: TargetReport, rows: dict[str, dict[str, Any]]) -> str:
    """Why the fully fixed tree has no fix applied, in words: no known finding was seen to
    reproduce (and which could not be checked), or each reproducing finding's reason."""
    if not rows:
        unknown = [k for k in report.known if k.get("could_not_check")]
        if not report.known:
            return "no known finding is registered for this target"
        why = "no known finding reproduces on this version"
        if unknown:
            why += "; ctxaudit could not check " + "; ".join(
                f"{k['id']} ({k['could_not_check']})" for k in unknown
            )
        return why
    return "no fix applies: " + "; ".join(
        f"{fid} ({row['status']}: {row['detail']})" for fid, row in rows.items()
    )


def _not_verified(test: dict[str, Any]) -> str:
    """Why a regression test that neither passed nor failed on its assertion verifies
    nothing, in words: skipped (pytest's results keep no reason for a skip; a target's
    regression test skips where its finding is not registered for the tree), or the
    error it failed with (its last line, or the phase when there is no text)."""
    if test["outcome"] == "skipped":
        return (
            f"its regression test was skipped with the fix (in its {test['when']}), so it "
            "verifies nothing: a finding's regression test skips on a tree the finding is "
            "not registered for (the results keep no reason for a skip)"
        )
    lines = [ln.strip() for ln in test.get("longrepr", "").splitlines() if ln.strip()]
    error = next((ln for ln in reversed(lines) if ln.startswith("E ")), lines[-1] if lines else "")
    if not error:
        error = f"{test['outcome']} in its {test['when']} with no failure text"
    return "its regression test errors with the fix: " + error[:200]


def _leave_out_findings(ids: Sequence[str]) -> dict[str, str]:
    """The default ``leave_out``: ``CTXAUDIT_FINDINGS`` (``Target.copy_env``'s default)."""
    return {"CTXAUDIT_FINDINGS": ",".join(ids) or "none"}
