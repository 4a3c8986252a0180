"""Run a target's bug-history programs (``ctxaudit/targets/<target>/history/``) on one
release and judge them against the record: each in its own process, forked after one
import of the library (``tests/fork_programs.py``). A program that exits neither 0
(holds) nor 1 (reproduces) is ctxaudit's own error: could not check, never a verdict.

The programs are plain library code on a release whose environment is installed from a
committed lock: nothing of ctxaudit's goes into what they print or exit. So their exit
codes are kept, with a digest of everything that goes in, in ``history_record.json``
beside each target's ``test_history.py`` (as a build tool caches a test's result on its
inputs). Where a release's digest is the recorded one, its recorded exit codes are judged;
anything else (a program, its folder, the lock, the interpreter, the preload, the
forking runner changed; a release resolved at build time, with no lock) runs the
programs. ``CTXAUDIT_HISTORY=run`` always runs them. The record is written only by

    .venv/bin/python -m tests.history_programs --record [TARGET ...]

from runs where every program exited 0 or 1: a crashed run is never recorded.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ctxaudit.outcomes import CouldNotCheck
from ctxaudit.paths import REPO_ROOT
from ctxaudit.targets import get

FORK = Path(__file__).with_name("fork_programs.py")
RECORD = "history_record.json"
#: the targets with a bug history, and the test module that runs it
TESTS = {
    "openai-agents": "tests.openai_agents.test_history",
    "langchain": "tests.langchain.test_history",
    "pydantic-ai": "tests.pydantic_ai.test_history",
}


def releases(bugs: Sequence[Any]) -> list[str]:
    """Every release the record says a program fails or holds on."""
    return sorted({v for bug in bugs for v in (*bug.fails_on, *bug.holds_on)})


def _cases(version: str, bugs: Sequence[Any]) -> list[tuple[Any, bool]]:
    return [
        (bug, version in bug.fails_on)
        for bug in bugs
        if version in bug.fails_on or version in bug.holds_on
    ]


def inputs(name: str, version: str, bugs: Sequence[Any], preload: str) -> str | None:
    """The digest of what the programs' exits on ``name==version`` depend on: the
    environment's key (its committed lock, the test pins, the interpreter), the forking
    runner, the preload, and each program's folder (a program may import a sibling).
    None where the environment is resolved at build time: nothing pins it."""
    library = get(name).library  # type: ignore[attr-defined]
    if library.committed_lock(version) is None:
        return None
    digest = hashlib.sha256(f"{library.env_key(version)}\n{preload}\n".encode())
    digest.update(FORK.read_bytes())
    for bug, _ in _cases(version, bugs):
        digest.update(f"\n{bug.program.relative_to(REPO_ROOT)}\n".encode())
        for sibling in sorted(bug.program.parent.glob("*.py")):
            digest.update(sibling.name.encode() + b"\0" + sibling.read_bytes())
    return digest.hexdigest()


def run_programs(
    name: str, version: str, bugs: Sequence[Any], preload: str
) -> dict[str, dict[str, Any]]:
    """Each program's exit and output on ``name==version``, run now."""
    target = get(name)
    process = target.suite_process(
        target.expand(f"{name}=={version}")[0], Path(tempfile.gettempdir())
    )
    assert process is not None, f"{name} runs in its release's environment"
    python, env = process
    # -P: the folder of fork_programs.py (tests/, which holds the langchain/ and
    # pydantic_ai/ test packages) must not shadow the library the programs import
    programs = [str(bug.program) for bug, _ in _cases(version, bugs)]
    cmd = [python, "-P", str(FORK), "--preload", preload, *programs]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, check=False)
    if proc.returncode != 0:
        raise CouldNotCheck(f"the programs could not run on {name} {version}:\n{proc.stderr}")
    results: dict[str, dict[str, Any]] = json.loads(proc.stdout)
    broken = [
        f"{Path(p).name} exited {r['exit']}:\n{r['output'][-2000:]}"
        for p, r in results.items()
        if r["exit"] not in (0, 1)
    ]
    if broken:
        raise CouldNotCheck(f"on {name} {version}: " + "\n".join(broken))
    return results


def recorded(
    record: Path, name: str, version: str, bugs: Sequence[Any], preload: str
) -> dict[str, dict[str, Any]] | None:
    """The recorded exits on ``name==version`` when its inputs are the recorded ones."""
    if os.environ.get("CTXAUDIT_HISTORY") == "run" or not record.is_file():
        return None
    entry = json.loads(record.read_text())["releases"].get(version)
    digest = inputs(name, version, bugs, preload)
    if digest is None or entry is None or entry["inputs"] != digest:
        return None
    exits = entry["exits"]
    return {
        str(bug.program): {"exit": exits[str(bug.program.relative_to(REPO_ROOT))], "output": ""}
        for bug, _ in _cases(version, bugs)
    }


def judge_on_release(
    name: str, version: str, bugs: Sequence[Any], preload: str, record: Path | None = None
) -> None:
    """Every bug's program on ``name==version``: it reproduces where the record says it
    fails, and not where it says it holds (``preload``: the modules imported once;
    ``record``: the recorded exits, used where the inputs are the recorded ones)."""
    results = recorded(record, name, version, bugs, preload) if record else None
    if results is None:
        results = run_programs(name, version, bugs, preload)
        print(f"{name} {version}: the programs ran")
    else:
        print(f"{name} {version}: the recorded exits ({record}; inputs unchanged; "
              "CTXAUDIT_HISTORY=run runs them)")  # fmt: skip
    wrong = [
        f"{bug.upstream} {'holds' if fails else 'reproduces'} on {name} {version}, "
        f"expected it to {'reproduce' if fails else 'hold'}:\n"
        f"{r['output'] or '(recorded: CTXAUDIT_HISTORY=run shows its output)'}"
        for bug, fails in _cases(version, bugs)
        for r in [results[str(bug.program)]]
        if (r["exit"] == 1) != fails
    ]
    assert not wrong, "\n".join(wrong)


def record_target(name: str) -> Path:
    """Run every release's programs of ``name`` and write their exits and inputs."""
    module = importlib.import_module(TESTS[name])
    bugs, preload = module.BUGS, module.PRELOAD
    out: dict[str, Any] = {}
    for version in releases(bugs):
        digest = inputs(name, version, bugs, preload)
        if digest is None:
            continue  # not pinned: always run
        results = run_programs(name, version, bugs, preload)
        out[version] = {
            "inputs": digest,
            "exits": {
                str(Path(p).relative_to(REPO_ROOT)): r["exit"] for p, r in sorted(results.items())
            },
        }
    path = Path(str(module.__file__)).with_name(RECORD)
    doc = {
        "about": "exit codes of the bug-history programs, by release, with the digest of "
        "their inputs (tests/history_programs.py); written by "
        "`.venv/bin/python -m tests.history_programs --record`",
        "python": sys.version.split()[0],
        "releases": out,
    }
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", action="store_true", required=True)
    parser.add_argument("targets", nargs="*", default=sorted(TESTS), metavar="TARGET")
    args = parser.parse_args()
    for name in args.targets:
        print(record_target(name))


if __name__ == "__main__":
    main()
