"""Rerunning one attribution of the fix audit alone (``ctxaudit attribute``), and what
the fix audit and the rerun share: how a run's test records are read.

An attribution replays a failure's example on an unfixed copy of the tree and on the
copy with one fix alone (:func:`attribute`); the fix explains the failure when the
example fails without it and runs through with it. Either run that gives no evidence (a
test that did not run, was skipped or ended in ctxaudit's own error) makes the
attribution "could not check", never "does not fail". :func:`attribute_command` is the
command a report prints under each attributed failure.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ctxaudit import fixes as fixlib
from ctxaudit.outcomes import COULD_NOT_CHECK
from ctxaudit.replay import parse_blob, ran_through
from ctxaudit.target_report import Finding, TargetReport, extract_findings

Runner = Callable[[str, list[str], dict[str, str], dict[str, list[str]]], list[dict[str, Any]]]


def records(tests: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each test's record: its call, or the last phase that failed (a setup or teardown
    error, which carries its ``could_not_check``, wins over the call)."""
    return {t["nodeid"]: t for t in tests if t["when"] == "call" or t["outcome"] == "failed"}


def unchecked_why(test: dict[str, Any] | None) -> str:
    """Why ctxaudit could not check this test's run ("" when it could)."""
    return str(test.get("could_not_check") or "") if test is not None else ""


def ran_clean(test: dict[str, Any] | None) -> bool:
    """The replayed failure did not happen: the example ran to its end without failing,
    drawn as recorded (``ctxaudit.replay.ran_through``), in a run ctxaudit could check."""
    return test is not None and not unchecked_why(test) and ran_through(test)


def attribute_command(
    report: TargetReport, failure: Finding, fix: str, left_out: Sequence[str] | None = None
) -> str:
    """The command that reruns one attribution: the failure's example replayed on an
    unfixed copy and on the copy with ``fix`` alone (``bin/ctxaudit attribute``), with
    the regions of ``left_out`` left out (default: every known finding that affects the
    version). How the command names the version is the target's
    (``attribute_args``; default ``--target NAME==VERSION``)."""
    from ctxaudit import targets
    from ctxaudit.targets.base import TargetError

    if left_out is None:
        left_out = [k["id"] for k in report.known if k["affects"]]
    try:
        naming = targets.get(report.target).attribute_args(report.spec, report.version)
    except TargetError:  # not a registered target (a test's toy)
        naming = ["--target", f"{report.target}=={report.version}"]
    cmd = (
        f"CTXAUDIT_FINDINGS={','.join(left_out) or 'none'} bin/ctxaudit attribute "
        f"{' '.join(naming)} --fix {fix} --profile {report.profile}"
    )
    if report.seed is not None:
        cmd += f" --seed {report.seed}"
    blob = parse_blob(failure.reproduction)
    if blob:
        cmd += f' --blob "{blob[1]}"'
    return cmd + f" '{failure.test}'"


@dataclasses.dataclass(frozen=True)
class Attribution:
    """One attribution to rerun alone (:func:`attribute`): the tree at ``root`` (its
    version's name ``version`` orders the forms a fix tries), the ``fix``, the failing
    ``test`` and its example ``blob`` (the bytes literal of its ``@reproduce_failure``;
    None: a plain rerun), and ``env``, the environment of both runs."""

    root: Path
    version: str
    fix: fixlib.Fix
    test: str
    blob: str | None
    env: Mapping[str, str]


#: what :func:`attribute` concludes: the fix explains the failure, it does not, or
#: ctxaudit could not check (a run that did not happen or ended in its own error)
EXPLAINED, NOT_EXPLAINED = "explained", "not explained"


def blob_error(literal: str) -> str | None:
    """Why ``literal`` (``--blob``: the bytes literal of a ``@reproduce_failure``) is no
    example Hypothesis can replay, in a line; None when it is one. Only the envelope is
    read (base64, then a raw or zlib-compressed payload, as every Hypothesis release
    writes it): the choices inside are the replaying Hypothesis' to read, which may be
    a target environment's own release."""
    import ast
    import base64
    import binascii
    import zlib

    try:
        value = ast.literal_eval(literal)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        value = None
    if not isinstance(value, bytes):
        return f"--blob {literal!r} is not the b'...' of a @reproduce_failure"
    try:
        payload = base64.b64decode(value, validate=True)
        if not payload or payload[0] not in (0, 1):
            raise ValueError("it does not start as a Hypothesis example does")
        if payload[0] == 1:
            zlib.decompress(payload[1:])
    except (binascii.Error, ValueError, zlib.error) as exc:
        return f"--blob {literal!r} is no example Hypothesis can replay ({exc})"
    return None


def _did_not_run(test: dict[str, Any] | None) -> str:
    """Why a run of the test gives no evidence either way ("" when it does)."""
    if test is None:
        return "the test did not run (no such test in the suites?)"
    if unchecked_why(test):
        return f"could not check ({unchecked_why(test)})"
    if test["outcome"] == "skipped":
        return f"the test was skipped (in its {test['when']})"
    return ""


def attribute(one: Attribution, run: Runner) -> tuple[str, str]:
    """One attribution, alone: replay the test (its example, or a plain rerun) on an
    unfixed copy of the tree and on the copy with the fix alone. Returns what
    happened, in words, and the conclusion: :data:`EXPLAINED` (it fails without the
    fix and runs through with it), :data:`NOT_EXPLAINED`, or ``COULD_NOT_CHECK`` when
    either run gives no evidence (the test did not run, was skipped, or ended in
    ctxaudit's own error): never "does not fail" for a test that did not run."""
    import hypothesis

    fix, test, env = one.fix, one.test, dict(one.env)
    failure = Finding([], "", test, "")
    replays = {test: [hypothesis.__version__, one.blob]} if one.blob else {}
    with tempfile.TemporaryDirectory(prefix="ctxaudit-attribute-") as tmp:
        plain = fixlib.fixed_copy(one.root, Path(tmp) / "unfixed", one.version, [])
        fixed = fixlib.fixed_copy(one.root, Path(tmp) / "fixed", one.version, [fix])
        if fixed.failed:
            return f"the fix does not apply: {fixed.failed[fix.finding]}", NOT_EXPLAINED
        without = records(run(str(plain.root), [test], env, replays)).get(test)
        with_fix = records(run(str(fixed.root), [test], env, replays)).get(test)
    lost = {"without the fix": _did_not_run(without), f"with {fix.finding}": _did_not_run(with_fix)}
    if any(lost.values()):
        lines = [f"{run_}: {why}" for run_, why in lost.items() if why]
        return "\n".join([*lines, f"{COULD_NOT_CHECK}: no verdict on {test}"]), COULD_NOT_CHECK
    assert without is not None and with_fix is not None
    failed = without["outcome"] == "failed" and not ran_clean(without)
    if failed:
        failure.message = (extract_findings(without) or [failure])[0].message
    passes = ran_clean(with_fix)
    lines = [
        "without the fix: " + (f"fails ({failure.message[:200]})" if failed else "does not fail"),
        f"with {fix.finding}: " + ("runs through, no failure" if passes else "fails"),
    ]
    if not passes:
        lines[-1] += f" ({(extract_findings(with_fix) or [failure])[0].message[:200]})"
    explained = failed and passes
    lines.append(
        f"explained by the fix of {fix.finding}" if explained else "not explained by this fix"
    )
    return "\n".join(lines), EXPLAINED if explained else NOT_EXPLAINED
