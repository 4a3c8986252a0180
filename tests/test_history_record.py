"""The bug-history record (tests/history_programs.py): recorded exits are judged only
where every input is the recorded one, and judged as a run's are."""

from __future__ import annotations

import importlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ctxaudit.targets.pydantic_ai.history import BUGS
from tests import history_programs as hp
from tests.pydantic_ai import test_history as pai

VERSION = "2.68.0"


@pytest.fixture
def ran(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The releases whose programs ran (a stand-in that says each held or reproduced
    as the record of bugs says)."""
    calls: list[str] = []

    def run(name: str, version: str, bugs: Any, preload: str) -> dict[str, dict[str, Any]]:
        calls.append(version)
        return {
            str(bug.program): {"exit": int(fails), "output": "ran"}
            for bug, fails in hp._cases(version, bugs)
        }

    monkeypatch.setattr(hp, "run_programs", run)
    return calls


def _copy(tmp_path: Path) -> Path:
    record = tmp_path / hp.RECORD
    shutil.copy(pai.RECORD, record)
    return record


def test_the_committed_records_are_of_every_pinned_release() -> None:
    for name, module_name in hp.TESTS.items():
        module = importlib.import_module(module_name)
        entries = json.loads(module.RECORD.read_text())["releases"]
        bugs = module.BUGS
        pinned = [v for v in hp.releases(bugs) if hp.inputs(name, v, bugs, "") is not None]
        assert sorted(entries) == sorted(pinned), name


def test_unchanged_inputs_judge_the_recorded_exits(tmp_path: Path, ran: list[str]) -> None:
    hp.judge_on_release("pydantic-ai", VERSION, BUGS, pai.PRELOAD, _copy(tmp_path))
    assert ran == []


def test_a_recorded_exit_against_the_record_of_bugs_fails(tmp_path: Path, ran: list[str]) -> None:
    record = _copy(tmp_path)
    doc = json.loads(record.read_text())
    exits = doc["releases"][VERSION]["exits"]
    program = next(iter(exits))
    exits[program] = 1 - exits[program]
    record.write_text(json.dumps(doc))
    with pytest.raises(AssertionError, match=f"(?s)on pydantic-ai {VERSION}.*recorded"):
        hp.judge_on_release("pydantic-ai", VERSION, BUGS, pai.PRELOAD, record)
    assert ran == []


@pytest.mark.parametrize("change", ["preload", "runner", "program", "asked to run"])
def test_any_changed_input_runs_the_programs(
    change: str, tmp_path: Path, ran: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    record, preload = _copy(tmp_path), pai.PRELOAD
    if change == "preload":
        preload += ",json"
    elif change == "runner":
        fork = tmp_path / "fork_programs.py"
        fork.write_text(hp.FORK.read_text() + "\n# changed\n")
        monkeypatch.setattr(hp, "FORK", fork)
    elif change == "program":
        bug = next(b for b in BUGS if VERSION in (*b.fails_on, *b.holds_on))
        folder = tmp_path / "history"
        shutil.copytree(bug.program.parent, folder)
        (folder / "helper.py").write_text("X = 1\n")  # a sibling it could import
        moved = type(bug)(**{**bug.__dict__, "program": folder / bug.program.name})
        monkeypatch.setattr(hp, "REPO_ROOT", tmp_path)
        bugs = tuple(moved if b is bug else b for b in BUGS)
        hp.judge_on_release("pydantic-ai", VERSION, bugs, preload, record)
        assert ran == [VERSION]
        return
    else:
        monkeypatch.setenv("CTXAUDIT_HISTORY", "run")
    hp.judge_on_release("pydantic-ai", VERSION, BUGS, preload, record)
    assert ran == [VERSION]
