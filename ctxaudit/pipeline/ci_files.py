"""The files CI systems read, where asked for: ``--junit-xml`` (a test case per
property, known or new finding and mutation gate) and ``--sarif`` (a result per
finding, at the line its fix changes). Their documents are the report layer's
(:mod:`ctxaudit.junit`, :mod:`ctxaudit.sarif`); this says which and where."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ctxaudit.targets import TargetError

if TYPE_CHECKING:
    from ctxaudit.pipeline.run import AuditRun
    from ctxaudit.target_report import TargetReport
    from ctxaudit.targets.base import Described


def write_ci_files(
    run: AuditRun,
    done: list[TargetReport],
    props: dict[str, dict[str, str]],
    accepted: dict[str, list[str]] | None,
) -> None:
    """``--junit-xml`` and ``--sarif``, where asked for."""
    options = run.options
    if options.junit_xml is not None:
        from ctxaudit import junit

        doc = junit.document(done, props, run.gates, accepted)
        print(f"ctxaudit: JUnit XML: {junit.write(options.junit_xml, doc)}")
    if options.sarif is not None:
        from ctxaudit import sarif

        baseline = options.baseline
        reasons = {e.id: e.why for e in baseline.entries} if baseline else {}
        ok = {
            label: {i: reasons.get(i, "") for i in ids} for label, ids in (accepted or {}).items()
        }
        log = sarif.document(done, props, locator(options.targets), ok)
        print(f"ctxaudit: SARIF: {sarif.write(options.sarif, log)}")


def locator(targets: list[Described]) -> Any:
    """Where a known finding lives in a version, for SARIF: the first line its fix's
    form for the tree changes (None where there is no such form or tree)."""
    from ctxaudit import fixes as fixlib
    from ctxaudit import sarif
    from ctxaudit.targets import fixes as registered_fixes
    from ctxaudit.targets import get as get_target

    by_label = {t.label: t for t in targets}

    def locate(report: Any, finding: str) -> tuple[str, int] | None:
        described = by_label.get(f"{report.target}-{report.version}")
        fix = registered_fixes().get(finding)
        if described is None or fix is None:
            return None
        kind = get_target(described.kind)
        try:
            resolved = kind.resolve(described.spec, described.repo)
            form = fixlib.choose(fix, resolved.root, kind.fix_version(resolved))
        except (TargetError, fixlib.NotApplied):
            return None
        for edit in form.edits:
            where = sarif.edit_location(resolved.root, edit.path, edit.old)
            if where is not None:
                return where
        return None

    return locate
