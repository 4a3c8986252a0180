"""Replaying the unfixed tree's failures on a copy of the tree: each test replayed once
a process (its shrunk example, or a plain rerun), and the control, the replays on an
unfixed copy that tell which failures a fix can be judged by at all."""

from __future__ import annotations

from typing import Any

from ctxaudit import fixes as fixlib
from ctxaudit.attribution import Runner, ran_clean, records, unchecked_why
from ctxaudit.fixaudit.state import Control, FixAudit
from ctxaudit.replay import parse_blob
from ctxaudit.target_report import Finding, extract_findings


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


def replay(
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


def control_replays(audit: FixAudit, failures: list[Finding]) -> Control:
    """The unfixed tree's failures replayed on an unfixed copy of the tree: a fix is
    judged by a replay only when it fails there with the failure's own message."""
    control = fixlib.fixed_copy(audit.root, audit.tmp / "unfixed", audit.version, []).root
    if failures:
        audit.tick("replays on the unfixed tree (control)")
    replayed, _ = _replayrecords(audit.run, str(control), failures, audit.env, [])
    reproduces = [_reproduced(t, f) for t, f in zip(replayed, failures, strict=True)]
    return Control(replayed, reproduces)
