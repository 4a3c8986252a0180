"""Under --baseline, an entry whose check ctxaudit could not make is said, with why: it
is neither a pass nor 'no longer reproduces' (the audit's exit is 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxaudit import baseline
from ctxaudit.pipeline.baseline import judged_by_baseline


def test_an_unchecked_entry_is_said_could_not_check(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    entry = baseline.Entry("GR-GAP-062", "gitreins", "V7", "known")
    accepted = baseline.Baseline(Path("b.toml"), (entry,))
    verdict = baseline.Verdict({}, {}, [], [(entry, "the suite did not run (pytest exit 4)")])
    monkeypatch.setattr(baseline, "judge", lambda b, reports: verdict)
    assert judged_by_baseline(accepted, []) is verdict
    out = capsys.readouterr().out
    assert "COULD NOT CHECK whether GR-GAP-062 reproduces" in out and "pytest exit 4" in out
    assert "no longer reproduces" not in out
