"""`python -m mutation run`: the progress file the audit's status line reads, and --only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mutation.__main__ import _ProgressFile, main


def test_progress_file_follows_the_phases(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    prog = _ProgressFile(path, echo=False)

    def state(rec: dict[str, object]) -> dict[str, object]:
        prog(rec)
        return json.loads(path.read_text())

    assert state({"event": "plan", "target": "t", "version": "1", "mutants": 3, "all": 9}) == {
        "phase": "baseline", "done": 0, "total": 3,
    }  # fmt: skip
    state({"event": "baseline", "tests": 5, "seconds": 1.0})
    state({"event": "result", "pass": 1, "id": "a", "status": "killed"})
    assert state({"event": "result", "pass": 1, "id": "b", "status": "survived"})["done"] == 2
    got = state({"event": "result", "pass": 2, "id": "b", "status": "survived"})
    assert (got["phase"], got["done"]) == ("recheck", 1)
    # the peer runs beside the suite: its own lane, the suite's left as it was
    assert state({"event": "peer", "suite": "theirs", "tests": 2})["peer"] == "baseline"
    state({"event": "baseline", "suite": "peer", "tests": 5, "seconds": 1.0})
    got = state({"event": "result", "suite": "peer", "pass": 1, "id": "a", "status": "killed"})
    assert (got["phase"], got["done"], got["total"], got["peer"]) == (
        "recheck",
        1,
        3,
        "mutants 1/3",
    )
    got = state({"event": "result", "pass": 3, "id": "b", "status": "killed"})
    assert (got["phase"], got["done"], got["peer"]) == ("seed recheck", 1, "mutants 1/3")
    assert state({"event": "done", "suite": "peer", "seconds": 2.0})["peer"] == "done"
    assert state({"event": "done", "seconds": 3.0})["phase"] == "finishing"


def test_only_without_a_match_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--target", "ledger", "--only", "no-such-mutant*", "--out", "/tmp/x"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == ["mutation: no mutant id matches no-such-mutant*"]
