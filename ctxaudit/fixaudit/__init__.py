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
   The target's own tests (where it declares some) run on the unfixed and the fully
   fixed trees: a fix must pass them except those its form names as pinning the bug
   (:mod:`~ctxaudit.fixaudit.own_tests`).
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

Its modules, one concern each: :mod:`~ctxaudit.fixaudit.state` (the options, and the
audit under way), :mod:`~ctxaudit.fixaudit.replays` (the replays, and the control),
:mod:`~ctxaudit.fixaudit.single_fix` (each fix alone), :mod:`~ctxaudit.fixaudit.fixed_tree`
(the fully fixed tree, and the fixes that break it), :mod:`~ctxaudit.fixaudit.own_tests`
(the harness's own tests on it), :mod:`~ctxaudit.fixaudit.owners` (the
unfixed tree's failures attributed). This one runs the steps in order (:func:`fix_audit`,
:func:`attribute_failures`) and records their results in the report.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from pathlib import Path
from typing import Any

from ctxaudit.attribution import Runner
from ctxaudit.fixaudit.fixed_tree import blame, fully_fixed_tree
from ctxaudit.fixaudit.own_tests import own_tests
from ctxaudit.fixaudit.owners import attribute_to_owners, first_owners
from ctxaudit.fixaudit.replays import control_replays
from ctxaudit.fixaudit.single_fix import each_fix_alone, single_fix_trees
from ctxaudit.fixaudit.state import VERIFIED as VERIFIED  # re-exported
from ctxaudit.fixaudit.state import FixAudit, FixAuditOptions, FixedTree, start
from ctxaudit.fixaudit.state import LeaveOut as LeaveOut  # re-exported
from ctxaudit.fixaudit.state import Ticker as Ticker  # re-exported
from ctxaudit.outcomes import FAILS
from ctxaudit.target_report import TargetReport


def fix_audit(report: TargetReport, root: Path, run: Runner, options: FixAuditOptions) -> None:
    """Add the fix audit to ``report`` (``fixes``, ``attributed``, ``fixed``), move the
    attributed failures out of ``report.findings`` and write the fixes' patches (each
    text once per target, ``ctxaudit.fix_patches``; the report links to them).

    The steps, each named below: the single-fix trees (:func:`single_fix_trees`); the
    control replays on an unfixed copy (:func:`control_replays`); each fix alone, its
    regression test and the failures' replays (:func:`each_fix_alone`); the fully
    fixed tree (:func:`fully_fixed_tree`) and the fixes that break it (:func:`blame`);
    then the unfixed tree's failures attributed (:func:`attribute_to_owners`) and the
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
        audit = start(report, root, run, options, Path(tmp))
        single_fix_trees(audit)
        control = control_replays(audit, failures)
        owners = each_fix_alone(audit, failures, control)
        fixed = fully_fixed_tree(audit)
        blame(audit, fixed)
        own_tests(audit, fixed)
    attribute_to_owners(audit, failures, owners, control)
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
        audit = start(report, root, run, options, Path(tmp), write_patches=False)
        single_fix_trees(audit)
        control = control_replays(audit, failures)
        owners = first_owners(audit, failures, control)
    attribute_to_owners(audit, failures, owners, control)


def _record(audit: FixAudit, fixed: FixedTree, elapsed_s: float) -> None:
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
        **({"own_tests": fixed.own_tests} if fixed.own_tests else {}),
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
