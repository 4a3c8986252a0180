"""A known finding's program that ends in an exception before its verdict is could not
check in the reproduction record the audit reads, never "does not reproduce"
(``ctxaudit/targets/lightspeed/program_outcome.py``). Seen failing before the module
existed: a target-side exception left no record, and the audit read the finding as not
reproducing."""

from __future__ import annotations

import pytest

from ctxaudit.outcomes import CouldNotCheck
from ctxaudit.targets.lightspeed.program_outcome import outcome


def test_a_verdict_is_passed_on_and_records_nothing() -> None:
    unchecked: dict[str, str] = {}
    assert outcome(lambda: "S6: the turn is lost", "LS-X", unchecked) == "S6: the turn is lost"
    assert outcome(lambda: None, "LS-Y", unchecked) is None
    assert unchecked == {}


def test_the_targets_exception_is_raised_as_it_was_and_recorded(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """An exception raised outside ctxaudit's code (as the tree's, or its HTTP client's,
    would be: a module of the target's) is raised again unchanged, and recorded."""
    where = tmp_path / "tree_module.py"
    where.write_text("def answer():\n    raise TimeoutError('the app did not answer')\n")
    namespace: dict[str, object] = {}
    exec(compile(where.read_text(), str(where), "exec"), namespace)
    unchecked: dict[str, str] = {}
    with pytest.raises(TimeoutError):
        outcome(namespace["answer"], "LS-X", unchecked)  # type: ignore[arg-type]
    assert "LS-X" in unchecked, "the program's exception left no record: 'does not reproduce'"
    assert unchecked["LS-X"].startswith("its program ended in TimeoutError: the app did not answer")
    assert "tree_module.py:2" in unchecked["LS-X"] and "before its verdict" in unchecked["LS-X"]


def test_ctxaudits_own_error_is_could_not_check() -> None:
    def broken() -> str | None:
        raise KeyError("a field the harness expected")

    unchecked: dict[str, str] = {}
    with pytest.raises(CouldNotCheck, match="LS-X's program could not be checked here"):
        outcome(broken, "LS-X", unchecked)
    assert "KeyError" in unchecked["LS-X"] and "ctxaudit's own code" in unchecked["LS-X"]
