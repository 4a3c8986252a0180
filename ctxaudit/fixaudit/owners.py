"""Which known finding's fix owns each failure of the unfixed tree: the first fix that
explains it (attribution alone, ``--no-fixes``), the failures moved to
``report.attributed`` with the command that reruns each attribution, and why the others
stay new."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxaudit.attribution import attribute_command, unchecked_why
from ctxaudit.fixaudit.replays import replay
from ctxaudit.fixaudit.state import Control, FixAudit
from ctxaudit.target_report import Finding


def first_owners(audit: FixAudit, failures: list[Finding], control: Control) -> list[list[str]]:
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
        passed, _ = replay(audit.run, tree, [failures[i] for i in open_], audit.env, [])
        for i, ok in zip(open_, passed, strict=True):
            if ok:
                owners[i].append(fid)
    return owners


def attribute_to_owners(
    audit: FixAudit, failures: list[Finding], owners: list[list[str]], control: Control
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
