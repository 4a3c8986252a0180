"""The harness's own tests on the fixed trees (step 2b of the fix audit): a fix must pass
them, except those that pin the bug, each named by its form (``Form.pins``).

The tests the target declares (``ctxaudit/own_tests.py``) run on the unfixed tree and
on the fully fixed one. A test that fails on both is the release's own, not the fixes'.
One that fails only with the fixes runs again on each fix alone, and if it fails with
none alone, on each pair of fixes: each fix (or pair) it fails with that does not name
it "breaks the harness's own tests" (its row says which); one that fails only with
every fix together is broken unless a fix names it; else it is *pinned* by the fixes
that name it. A pin that passes with the fixes is *stale*: the form names a
test its fix does not change.

Three outcomes: a run that did not happen (an environment that does not build, a
suite that did not collect) leaves the check "could not check" with its reason; it
never reads as passing, and no fix's status changes for it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from ctxaudit import fixes as fixlib
from ctxaudit.fixaudit.state import VERIFIED, FixAudit, FixedTree


def own_tests(audit: FixAudit, fixed: FixedTree) -> None:
    """Run the target's own tests on the unfixed and the fully fixed trees and record
    what the fixes changed (``fixed.own_tests``); a fix that breaks one is marked so."""
    runner = audit.options.own_tests
    if runner is None or not fixed.applied or fixed.root is None:
        return
    audit.tick("the harness's own tests, without and with the fixes")
    base = runner(audit.root, ())
    full = runner(fixed.root, ()) if not base.error else base
    if base.error or full.error:
        why = base.error or full.error
        fixed.own_tests = {"could_not_check": why}
        return
    pins = {fid: _pins(audit, fid) for fid in fixed.applied}
    already = base.failed()
    changed = sorted(full.failed() - already)
    blamed = _blame(audit, fixed.applied, changed) if changed else {}
    pinned: dict[str, list[str]] = {}
    broken: dict[str, list[str]] = {}
    for test in changed:
        naming = [fid for fid, names in pins.items() if _names(names, test)]
        # a fix it fails with alone (or a pair of fixes) breaks it unless that fix names
        # it (each of the pair); one that fails only with every fix together is broken
        # unless a fix names it
        breakers = [
            who for who in blamed.get(test, []) if not set(who.split(" with ")) <= set(naming)
        ]
        if breakers or not naming:
            broken[test] = breakers
        else:
            pinned[test] = naming
    stale: dict[str, list[str]] = {}
    for fid, names in pins.items():
        unused = [p for p in names if not any(_names([p], t) for t in full.failed())]
        if unused:
            stale[fid] = unused
    fixed.own_tests = {
        "ran": len({t["nodeid"] for t in full.tests}),
        "failing_unfixed": sorted(already),
        "pinned": pinned,
        "broken": broken,
        "stale_pins": stale,
    }
    for fid in fixed.applied:
        theirs = [t for t, who in broken.items() if any(fid in w.split(" with ") for w in who)]
        row = audit.rows[fid]
        if theirs and row["status"] in (VERIFIED, "not verified"):
            row["status"] = "breaks the harness's own tests"
            row["detail"] = (
                f"{len(theirs)} of them fail with it alone: "
                + ", ".join(f"`{t}`" for t in theirs[:5])
                + (" ..." if len(theirs) > 5 else "")
            )


def _pins(audit: FixAudit, fid: str) -> tuple[str, ...]:
    """The own tests the form of ``fid``'s fix that this tree takes names as pinning
    the bug."""
    try:
        form = fixlib.choose(audit.fixes[fid], audit.root, audit.version)
    except fixlib.NotApplied:
        return ()
    return () if form is None else form.pins


def _names(pins: Sequence[str], test: str) -> bool:
    """Whether ``pins`` name ``test`` (a pin without parameters names each of them)."""
    return any(test == p or test.startswith(p + "[") for p in pins)


def _blame(audit: FixAudit, applied: list[str], changed: list[str]) -> dict[str, list[str]]:
    """Each test the fixes changed, rerun on each fix alone: the fixes it fails with; one
    that fails with none alone, rerun on each pair of fixes: the pairs (``"A with B"``). A
    rerun that did not happen blames nothing."""
    runner = audit.options.own_tests
    assert runner is not None
    blamed: dict[str, list[str]] = {}
    for fid in applied:
        tree = audit.singles.get(fid)
        if tree is None:
            continue
        for test in sorted(runner(tree, changed).failed() & set(changed)):
            blamed.setdefault(test, []).append(fid)
    together = [t for t in changed if t not in blamed]
    if not together or len(applied) < 3:  # with two fixes, the pair is the fully fixed tree
        return blamed
    for a, b in itertools.combinations(applied, 2):
        pair = [audit.fixes[a], audit.fixes[b]]
        got = fixlib.fixed_copy(audit.root, audit.tmp / f"own-{a}-{b}", audit.version, pair)
        if got.failed:
            continue
        for test in sorted(runner(got.root, together).failed() & set(together)):
            blamed.setdefault(test, []).append(f"{a} with {b}")
    return blamed
