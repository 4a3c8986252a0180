"""The fully fixed tree (step 2 of the fix audit): every fix that applies, applied
together; every suite run on it under each seed and its properties judged; and each of
its failures replayed with one fix left out at a time, to find the fixes that break it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxaudit import fixes as fixlib
from ctxaudit.fixaudit.replays import replay
from ctxaudit.fixaudit.state import VERIFIED, FixAudit, FixedTree
from ctxaudit.outcomes import COULD_NOT_CHECK
from ctxaudit.target_report import TargetReport, heading, judge


def fully_fixed_tree(audit: FixAudit) -> FixedTree:
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
    return FixedTree(full.applied, link, none_applied, fixed, seeds, full.root)


def _fixed_tree_tests(audit: FixAudit, tree: Path, seeds: list[int | None]) -> list[dict[str, Any]]:
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


def blame(audit: FixAudit, fixed: FixedTree) -> None:
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
            passed, _ = replay(audit.run, str(other.root), findings, env, [])
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
