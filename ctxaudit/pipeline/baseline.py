"""The properties' verdict under ``--baseline`` (the known findings the gate
accepts), said in a line each; the judgement itself is :func:`ctxaudit.baseline.judge`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxaudit.target_report import TargetReport


def judged_by_baseline(baseline: Any, reports: list[TargetReport]) -> Any:
    """The properties' verdict under ``baseline`` (:class:`ctxaudit.baseline.Verdict`),
    said in a line each: it fails when a version fails beyond what it accepts, or an
    entry of it no longer reproduces."""
    from ctxaudit.baseline import judge

    verdict = judge(baseline, reports)
    name = baseline.path
    for label, ids in verdict.accepted.items():
        print(f"ctxaudit: {label}: accepted by the baseline {name}: {', '.join(ids)}")
    for label, why in verdict.failing.items():
        print(f"ctxaudit: {label}: FAILS beyond the baseline: {'; '.join(why)}")
    for entry in verdict.stale:
        print(f"ctxaudit: baseline {name}: {entry.id} no longer reproduces on any audited "
              f"{entry.target} version: remove it, so that its return fails the gate")  # fmt: skip
    for entry, reason in verdict.unchecked:
        print(f"ctxaudit: baseline {name}: COULD NOT CHECK whether {entry.id} reproduces "
              f"on {entry.target}: {reason}")  # fmt: skip
    if baseline.unreasoned():
        print(f"ctxaudit: baseline {name}: no reason given (why) for "
              f"{', '.join(baseline.unreasoned())}")  # fmt: skip
    return verdict
