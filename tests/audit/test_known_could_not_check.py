"""A known finding whose check did not run is "could not check" in every report, never
"does not reproduce": findings.md says so with the reason, and JUnit makes it an
error even where the finding is not registered for the version."""

from __future__ import annotations

from ctxaudit import junit
from ctxaudit.target_report import TargetReport
from ctxaudit.templating import render

KNOWN = {
    "id": "X-ONE",
    "property": "S6",
    "summary": "a turn is lost.",
    "region": "anywhere",
    "repro": "tests/x.py::test_x",
    "affects": False,
    "registered": False,
    "could_not_check": "the suite did not run (pytest exit 4)",
}


def report() -> TargetReport:
    return TargetReport("ledger", "0.1.0", "ledger", "ci", 0, 1.0, 2, known=[dict(KNOWN)])


def test_findings_md_says_could_not_check_with_the_reason() -> None:
    text = render(
        "findings.md.j2", r=report(), names={}, heading=str, rerun=str, reproduce=str, registry="x"
    )
    line = next(ln for ln in text.splitlines() if ln.startswith("- X-ONE"))
    assert "could not check" in line and "pytest exit 4" in line
    assert "does not reproduce" not in line


def test_junit_makes_it_an_error_even_when_not_registered() -> None:
    root = junit.document([report()], {"ledger": {}}, {})
    errors = [c for c in root.iter("testcase") if c.find("error") is not None]
    assert any("X-ONE" in (c.get("name") or "") for c in errors)
