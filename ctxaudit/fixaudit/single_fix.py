"""Each known finding's fix alone (steps 1 and 3 of the fix audit): a copy of the tree
with that fix only (or why there is none), its regression test's verdict on it, and the
unfixed tree's failures replayed on it."""

from __future__ import annotations

from typing import Any

from ctxaudit import fixes as fixlib
from ctxaudit.attribution import unchecked_why
from ctxaudit.fixaudit.replays import replay
from ctxaudit.fixaudit.state import VERIFIED, Control, FixAudit
from ctxaudit.target_report import Finding


def single_fix_trees(audit: FixAudit) -> None:
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


def each_fix_alone(audit: FixAudit, failures: list[Finding], control: Control) -> list[list[str]]:
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
        passed, extra = replay(audit.run, str(tree), failures, assumed, [repro[fid]])
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
