"""Hand-written mutants of the ledger, each run against the settlement suite.

Usage (from the repository root)::

    .venv/bin/python tests/settlement/check_mutants.py [--profile mutation] [--only SUBSTRING]
        [--tests tests/settlement] [--list]

Each mutant is a text patch (an exact snippet replaced by another) to one
file of ``ledger/``. For each, the repository (without ``.git`` and
``.venv``) is copied to a temporary directory, the patch applied there, and
``pytest tests/settlement -x`` run with that directory as the working
directory, so ``import ledger`` finds the patched copy first (the script
checks that it does). A mutant is *killed* when pytest fails. The unpatched
copy runs first and must pass.

These are the changes section 3 of docs/properties.md requires the suite to catch;
the mutation engineer's catalogue (``mutation/``) is separate.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Mutant:
    name: str
    file: str
    old: str
    new: str
    #: why no test can kill it, when it is equivalent (reviewed like code)
    equivalent: str = ""


MUTANTS = [
    # -- the write removed from each path ------------------------------------
    Mutant(
        "removed write: query",
        "ledger/service.py",
        """    async def query(self, request: Request) -> Reply:
        prepared = self._prepare(request)
        response = await self._server.create(prepared.server_request)
        prepared.owner.report_completed(response.output)
""",
        """    async def query(self, request: Request) -> Reply:
        prepared = self._prepare(request)
        response = await self._server.create(prepared.server_request)
""",
    ),
    Mutant(
        "removed write: responses, completed",
        "ledger/service.py",
        """            return self._reply(prepared, _refusal_output(refusal), None, blocked=True)
        response = await self._server.create(prepared.server_request)
        prepared.owner.report_completed(response.output)
""",
        """            return self._reply(prepared, _refusal_output(refusal), None, blocked=True)
        response = await self._server.create(prepared.server_request)
""",
    ),
    Mutant(
        "removed write: responses, blocked",
        "ledger/service.py",
        """        if refusal is not None:
            prepared.owner.report_blocked(refusal)
            prepared.owner.finish()
""",
        """        if refusal is not None:
            prepared.owner.finish()
""",
    ),
    Mutant(
        "removed write: responses_stream, blocked",
        "ledger/service.py",
        """            try:
                prepared.owner.report_blocked(refusal)
            except WriteFailedError:""",
        """            try:
                pass
            except WriteFailedError:""",
    ),
    Mutant(
        "removed write: stream end",
        "ledger/service.py",
        """        try:
            self.owner.report_completed(event.response.output)
        except WriteFailedError:""",
        """        try:
            pass
        except WriteFailedError:""",
    ),
    Mutant(
        "removed write: interrupt callback",
        "ledger/service.py",
        """            settled = self.owner.report_interrupted(self.streamed)
        except WriteFailedError:""",
        """            settled = True
        except WriteFailedError:""",
    ),
    Mutant(
        "removed write: cancellation handler",
        "ledger/service.py",
        """        try:
            self.owner.report_interrupted(self.streamed)
        except WriteFailedError:
            log.exception("could not store cancelled turn %s", self.request_id)""",
        """        try:
            pass
        except WriteFailedError:
            log.exception("could not store cancelled turn %s", self.request_id)""",
    ),
    Mutant(
        "removed write: the server's own append",
        "ledger/server.py",
        """            self._store.append_turn(request.conversation, items, response=record)""",
        """            self._store.save_response(record)""",
    ),
    # -- checks removed --------------------------------------------------------
    Mutant(
        "S4 check removed",
        "ledger/owner.py",
        """        if compacted and original_input is None:
            raise ValueError(""",
        """        if False:
            raise ValueError(""",
    ),
    Mutant(
        "S5 check removed",
        "ledger/owner.py",
        """        if self.compacted and not self._settled:
            raise TurnNotStoredError(""",
        """        if False:
            raise TurnNotStoredError(""",
    ),
    # -- writing twice, settling twice -------------------------------------------
    Mutant(
        "write doubled",
        "ledger/owner.py",
        """        self._store.append_turn(self.conversation_id, items)
""",
        """        self._store.append_turn(self.conversation_id, items)
        self._store.append_turn(self.conversation_id, items)
""",
    ),
    Mutant(
        "settled state ignored",
        "ledger/owner.py",
        """        if self._settled:
            return False
""",
        "",
    ),
    Mutant(
        # The stream end runs inside the pull that finishes inference, so it can only
        # come second when the finisher before it leaves that pull running (resetting
        # the settled flag in _stream_end alone can never change behaviour).
        "second finisher also writes: stream end (interrupt leaves inference running)",
        "ledger/service.py",
        """        self._stop_requested = True
        if self._pull is not None:
            self._pull.cancel()
        return settled""",
        """        self._stop_requested = True
        return settled""",
    ),
    Mutant(
        "second finisher also writes: interrupt callback",
        "ledger/service.py",
        """            settled = self.owner.report_interrupted(self.streamed)""",
        """            self.owner._settled = False
            settled = self.owner.report_interrupted(self.streamed)""",
    ),
    Mutant(
        "second finisher also writes: cancellation handler",
        "ledger/service.py",
        """        try:
            self.owner.report_interrupted(self.streamed)
        except WriteFailedError:
            log.exception("could not store cancelled turn %s", self.request_id)""",
        """        try:
            self.owner._settled = False
            self.owner.report_interrupted(self.streamed)
        except WriteFailedError:
            log.exception("could not store cancelled turn %s", self.request_id)""",
    ),
    Mutant(
        "interrupt guard ignored: unknown or finished stream",
        "ledger/service.py",
        """        stream = self._streams.get(request_id)
        if stream is None:
            return False
""",
        """        stream = self._streams.get(request_id)
""",
    ),
    Mutant(
        "interrupt guard ignored: chunk relayed after an interrupt",
        "ledger/service.py",
        """                if self._stop_requested:
                    break
                self.streamed.append(event.text)""",
        """                self.streamed.append(event.text)""",
    ),
    # -- the wrong input, the wrong writer ---------------------------------------
    Mutant(
        "explicit input stored instead of original",
        "ledger/service.py",
        """            original_input=plan.original_input,
            summary=plan.summary,""",
        """            original_input=server_request.input,
            summary=plan.summary,""",
    ),
    Mutant(
        "server-stored turn stored again",
        "ledger/owner.py",
        """        return self.store_turn and not server_stores""",
        """        return self.store_turn""",
    ),
    Mutant(
        "store flag ignored: owner",
        "ledger/owner.py",
        """        return self.store_turn and not server_stores""",
        """        return not server_stores""",
    ),
    Mutant(
        "store flag ignored: server",
        "ledger/server.py",
        """        if not request.store:
            return ServerResponse(response_id, output, recorded=False)""",
        """        if False:
            return ServerResponse(response_id, output, recorded=False)""",
    ),
    # -- S9: compaction shows in the reply ------------------------------------
    Mutant(
        "S9 compacted query answers nothing",
        "ledger/service.py",
        """        prepared.owner.finish()
        return self._reply(prepared, response.output, response.id if response.recorded else None)

    async def responses""",
        """        prepared.owner.finish()
        output = () if prepared.owner.compacted else response.output
        return self._reply(prepared, output, response.id if response.recorded else None)

    async def responses""",
    ),
    Mutant(
        "S9 compacted responses fails after storing the turn",
        "ledger/service.py",
        """        prepared.owner.finish()
        return self._reply(prepared, response.output, response.id if response.recorded else None)

    # -- streaming paths""",
        """        prepared.owner.finish()
        if prepared.owner.compacted:
            raise RuntimeError("compacted request")
        return self._reply(prepared, response.output, response.id if response.recorded else None)

    # -- streaming paths""",
    ),
    # -- C1 ----------------------------------------------------------------------
    Mutant(
        "C1 `>` -> `>=` (ratio side)",
        "ledger/compaction.py",
        """estimate > config.threshold_ratio * config.context_window""",
        """estimate >= config.threshold_ratio * config.context_window""",
    ),
    Mutant(
        "C1 `>` -> `>=` (floor side)",
        "ledger/compaction.py",
        """estimate > config.token_floor""",
        """estimate >= config.token_floor""",
    ),
    Mutant(
        "C1 buffer: `>` -> `>=` (a fold of no turn)",
        "ledger/compaction.py",
        """    if last_to_fold > covered:""",
        """    if last_to_fold >= covered:""",
    ),
    Mutant(
        "C1 buffer: one turn more kept",
        "ledger/compaction.py",
        """    last_to_fold = len(numbers) - config.buffer_turns""",
        """    last_to_fold = len(numbers) - config.buffer_turns - 1""",
    ),
    Mutant(
        "C1 buffer: one turn fewer kept",
        "ledger/compaction.py",
        """    last_to_fold = len(numbers) - config.buffer_turns""",
        """    last_to_fold = len(numbers) - config.buffer_turns + 1""",
    ),
    # -- C1's configuration at the edges of its ranges ---------------------------
    Mutant(
        "C1 config: a ratio of exactly 1 refused",
        "ledger/config.py",
        """threshold_ratio: float = Field(gt=0.0, le=1.0)""",
        """threshold_ratio: float = Field(gt=0.0, lt=1.0)""",
    ),
    Mutant(
        "C1 config: a window of 1 refused",
        "ledger/config.py",
        """context_window: int = Field(gt=0)""",
        """context_window: int = Field(gt=1)""",
    ),
    Mutant(
        "C1 config: a floor of 0 refused",
        "ledger/config.py",
        """token_floor: int = Field(default=0, ge=0)""",
        """token_floor: int = Field(default=0, gt=0)""",
    ),
    Mutant(
        "C1 config: a buffer of 0 refused",
        "ledger/config.py",
        """buffer_turns: int = Field(default=2, ge=0)""",
        """buffer_turns: int = Field(default=2, gt=0)""",
    ),
]


def copy_repo(dest: Path) -> None:
    ignore = shutil.ignore_patterns(
        ".git", ".venv", ".cache", "__pycache__", ".pytest_cache", ".hypothesis", ".mypy_cache",
        ".ruff_cache", "mutants", "*.egg-info", "reports",
    )  # fmt: skip
    shutil.copytree(ROOT, dest, ignore=ignore)


def apply(root: Path, mutant: Mutant) -> None:
    path = root / mutant.file
    text = path.read_text(encoding="utf-8")
    count = text.count(mutant.old)
    if count != 1:
        raise SystemExit(f"mutant {mutant.name!r}: snippet found {count} times in {mutant.file}")
    path.write_text(text.replace(mutant.old, mutant.new), encoding="utf-8")


def run_suite(
    root: Path, profile: str, timeout: float, tests: str = "tests/settlement"
) -> tuple[int, str, float]:
    env = {**os.environ, "CTXAUDIT_PROFILE": profile, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTHONPATH", None)
    where = subprocess.run(
        [sys.executable, "-c", "import ledger; print(ledger.__file__)"],
        cwd=root, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    if not Path(where.stdout.strip()).resolve().is_relative_to(root.resolve()):
        raise SystemExit(f"the copy's ledger is shadowed by {where.stdout.strip()}")
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", tests, "-x", "-q", "-p", "no:cacheprovider"],
        cwd=root, env=env, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip
    return proc.returncode, proc.stdout + proc.stderr, time.monotonic() - started


def first_failure(output: str) -> str:
    match = re.search(r"^(FAILED|ERROR) (\S+)", output, re.M)
    return match.group(2).split("/")[-1] if match else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--profile", default="mutation", help="Hypothesis profile (default: mutation, no shrinking)"
    )
    parser.add_argument("--only", default="", help="run mutants whose name contains this")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument(
        "--tests", default="tests/settlement", help="what pytest runs (default: tests/settlement)"
    )
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTANTS if args.only in m.name]
    if args.list:
        for mutant in chosen:
            print(f"{mutant.name}  ({mutant.file})")
        return 0

    with tempfile.TemporaryDirectory(prefix="ctxaudit-mutants-") as tmp:
        base = Path(tmp) / "original"
        copy_repo(base)
        rc, output, seconds = run_suite(base, args.profile, args.timeout, args.tests)
        if rc != 0:
            print(output)
            print("the unmutated suite fails: fix that first", file=sys.stderr)
            return 2
        print(f"unmutated suite passes ({seconds:.1f} s, profile {args.profile})")
        survivors = 0
        width = max(len(m.name) for m in chosen)
        for index, mutant in enumerate(chosen):
            root = Path(tmp) / f"m{index}"
            shutil.copytree(base, root)
            apply(root, mutant)
            rc, output, seconds = run_suite(root, args.profile, args.timeout, args.tests)
            if rc == 1:
                verdict = "killed"
            elif rc == 0 and mutant.equivalent:
                verdict = "equivalent"
            elif rc == 0:
                verdict = "SURVIVED"
                survivors += 1
            else:
                verdict = f"error rc={rc}"
            print(
                f"{mutant.name:<{width}}  {verdict:<10}  {seconds:5.1f} s  {first_failure(output)}"
            )
            if verdict == "equivalent":
                print(f"    equivalent: {mutant.equivalent}")
            sys.stdout.flush()
            shutil.rmtree(root)
        equivalent = sum(1 for m in chosen if m.equivalent)
        print(f"{survivors} survived of {len(chosen)} ({equivalent} declared equivalent)")
        return 1 if survivors else 0


if __name__ == "__main__":
    raise SystemExit(main())
