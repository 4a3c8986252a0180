"""A target's own suites (outside ctxaudit's files) get the same node ids wherever
ctxaudit is: pytest would otherwise count them from the folder common to them and to
where it runs, and a known finding's check, found by its id, would read "did not run"
when the checkout and the suites share a parent (a clone under /tmp, say)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxaudit import suite_run
from tests.faults.test_outcomes import run_skipped_check


def test_a_target_suites_ids_do_not_depend_on_where_ctxaudit_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout, suites = tmp_path / "checkout", tmp_path / "suites"
    checkout.mkdir()
    suites.mkdir()
    monkeypatch.setattr(suite_run, "REPO_ROOT", checkout)  # where the suites' process runs
    tests, output = run_skipped_check(suites)
    assert [t["nodeid"] for t in tests] == ["test_known.py::test_known"], output[-2000:]
