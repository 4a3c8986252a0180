"""Run one configuration case against a gitreins tree in a child process with
a memory limit, so a target that blows up on a value is a finding, not a dead
test run.

    python -m ctxaudit.targets.gitreins.config ROOT CASE_JSON   (prints RESULT_JSON)

A case sets ``evaluator.compaction_threshold`` to ``raw`` in
``.gitreins/config.yaml`` with ``max_input_tokens`` as the budget, then the
scripted LLM answers: ``first`` input tokens (one tool call), then 1 token
(one tool call), then a verdict. The result says whether the evaluation raised
before the first LLM call (and with what text), which of the calls after the
first were compacted, how it ended, and the warnings it logged.
"""

from __future__ import annotations

import json
import logging
import os
import resource
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxaudit.outcomes import CouldNotCheck, could_not_check

MEMORY_LIMIT = 1536 * 2**20  # bytes of address space for the child
#: CPU seconds a case may use: a target that loops for ever is stopped by the kernel
#: (SIGXCPU) after this much of its own work, however loaded the machine is, and that
#: is a finding; a case needs well under a second
CPU_LIMIT = 30
#: wall seconds after which the parent stops waiting: only a child that gets no CPU at
#: all can reach it, so it is ctxaudit's failure to run the case, never a verdict
TIMEOUT = 900.0
#: the first word of a child's answer when its failure is ctxaudit's own error
HARNESS = "HARNESS "


@dataclass(frozen=True)
class ConfigResult:
    raised_before_first_call: str | None
    compacted: list[bool]  # for each LLM call after the first
    ended: str  # "verdict", "cap", "llm-failure", "crash: ..." or "killed: ..."
    warnings: list[str]


def _child_run(args: list[str]) -> tuple[Any, str | None]:
    """Run a case in a memory-limited child (without GITREINS_* from our
    environment); return its RESULT payload, or why it gave none.

    The child is a fork of this process when it can be (no gitreins imported yet, or
    the one at ``args[0]``): a fork costs milliseconds where a new interpreter costs
    ~0.5 s, and it keeps whatever this process has switched on (a mutant under test).
    Otherwise it is a new interpreter (``python -m ctxaudit.targets.gitreins.config``).
    """
    if _can_fork(Path(args[0])):
        return _forked_run(args)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "ctxaudit.targets.gitreins.config", *args],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
            env=_child_env_from(dict(os.environ)),
        )
    except subprocess.TimeoutExpired:
        raise CouldNotCheck(f"the case's child gave no answer within {TIMEOUT:.0f} s") from None
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(("RESULT ", HARNESS))]
    if lines and lines[-1].startswith(HARNESS):
        raise CouldNotCheck("in the case's child: " + lines[-1].removeprefix(HARNESS))
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return None, _died(proc.returncode, tail)
    return json.loads(lines[-1].removeprefix("RESULT ")), None


def _died(code: int, text: str) -> str:
    """Why a case gave no result, when the target is why: it raised, or looped past the
    CPU limit. A child killed by any other signal was killed from outside: ctxaudit could
    not run the case (raises CouldNotCheck)."""
    if code == -signal.SIGXCPU:
        return f"killed: used {CPU_LIMIT} s of CPU without an answer"
    if code < 0:
        name = signal.Signals(-code).name
        raise CouldNotCheck(f"the case's child was killed by {name} from outside")
    return f"killed: exit {code}: {text}"


def _limit(vsize: int = 0) -> None:
    """The child's limits: address space, and CPU time (a hang is the target's)."""
    resource.setrlimit(resource.RLIMIT_AS, (vsize + MEMORY_LIMIT, vsize + MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_LIMIT, CPU_LIMIT + 5))


def _answer(args: list[str]) -> tuple[str, int]:
    """The child's answer line and exit code: its result; what the target raised (exit 1,
    the case's result says it); or ctxaudit's own error (``HARNESS``, exit 3)."""
    try:
        return "RESULT " + json.dumps(_work(args)), 0
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        why = could_not_check(exc)
        if why is not None:
            return HARNESS + why[:500], 3
        return f"{type(exc).__name__}: {exc}"[:300], 1


def _can_fork(root: Path) -> bool:
    if os.environ.get("CTXAUDIT_CONFIG_CHILD") == "spawn":
        return False
    engine = sys.modules.get("engine")
    if engine is None:
        return True
    where = Path(getattr(engine, "__file__", "") or "").resolve().parent.parent
    return where == root.resolve()


def _work(args: list[str]) -> Any:
    if args[1] == "caps":
        return _caps_child(args[0], json.loads(args[2]))
    return _child(args[0], json.loads(args[1])).__dict__


def _forked_run(args: list[str]) -> tuple[Any, str | None]:
    # the child's temporary files (the loop's workdir) go in a folder this process
    # removes: the child ends in os._exit, which runs no cleanup
    with tempfile.TemporaryDirectory(prefix="ctxaudit-case-") as scratch:
        return _forked_run_in(args, scratch)


def _forked_run_in(args: list[str], scratch: str) -> tuple[Any, str | None]:
    rfd, wfd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the caller's code
        try:
            os.close(rfd)
            for name in [k for k in os.environ if k.startswith("GITREINS_")]:
                del os.environ[name]
            tempfile.tempdir = os.environ["TMPDIR"] = scratch
            _limit(
                int(Path("/proc/self/statm").read_text(encoding="utf-8").split()[0])
                * resource.getpagesize()
            )
            payload, code = _answer(args)
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            payload, code = HARNESS + f"{type(exc).__name__}: {exc}"[:300], 3
        data = memoryview(payload.encode())
        while data:
            data = data[os.write(wfd, data) :]
        os._exit(code)
    os.close(wfd)
    chunks: list[bytes] = []
    deadline = time.monotonic() + TIMEOUT
    with os.fdopen(rfd, "rb") as pipe:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([pipe], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                raise CouldNotCheck(f"the case's child gave no answer within {TIMEOUT:.0f} s")
            chunk = os.read(pipe.fileno(), 65536)
            if not chunk:
                break
            chunks.append(chunk)
    _pid, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    text = b"".join(chunks).decode(errors="replace")
    if text.startswith(HARNESS):
        raise CouldNotCheck("in the case's child: " + text.removeprefix(HARNESS))
    if code != 0 or not text.startswith("RESULT "):
        return None, _died(code, text.strip() or "?")
    return json.loads(text.removeprefix("RESULT ")), None


def _child_env_from(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if not k.startswith("GITREINS_")}


def run_case(root: Path, raw: Any, max_input_tokens: int, first: int) -> ConfigResult:
    case = json.dumps({"raw": raw, "max_input_tokens": max_input_tokens, "first": first})
    payload, why = _child_run([str(root), case])
    if why is not None:
        return ConfigResult(None, [], why, [])
    return ConfigResult(**payload)


def run_caps(root: Path, evaluator_sections: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """B6: the caps gitreins reads from each ``evaluator:`` section of a
    ``.gitreins/config.yaml``, in one memory-limited child. Each result has the
    EvalCap fields, or ``{"error": ...}``; a child that dies fails them all."""
    payload, why = _child_run([str(root), "caps", json.dumps(evaluator_sections)])
    if why is not None:
        return [{"error": why}] * len(evaluator_sections)
    result: list[dict[str, Any]] = payload
    return result


def _caps_child(root: str, sections: list[dict[str, Any]]) -> list[dict[str, Any]]:
    import tempfile

    from ctxaudit.targets.gitreins.loop import ScriptedLLM
    from ctxaudit.targets.gitreins.tree import from_path, load

    mods = load(from_path(Path(root)))
    out: list[dict[str, Any]] = []
    for section in sections:
        with tempfile.TemporaryDirectory(prefix="ctxaudit-caps-") as tmp:
            (Path(tmp) / ".gitreins").mkdir()
            section = dict(section)
            env = section.pop("env", {})  # GITREINS_MAX_* overrides, set for this case only
            # the config file's other sections (``defaults:``, ``guards:``), when the case has them
            others = section.pop("file", {})
            config = {**others, "evaluator": section}
            (Path(tmp) / ".gitreins" / "config.yaml").write_text(json.dumps(config))
            os.environ.update(env)
            try:
                cap = mods.evaluator.AgenticEvaluator(ScriptedLLM(), workdir=tmp).eval_cap
            except Exception as exc:  # noqa: BLE001 - reported as the case's result
                out.append({"error": repr(exc)[:300]})
                continue
            finally:
                for name in env:
                    os.environ.pop(name, None)
            fields = (
                "max_iterations",
                "max_seconds",
                "max_input_tokens",
                "max_output_tokens",
                "tool_call_weight",
            )
            out.append({f: getattr(cap, f) for f in fields})
    return out


def _child(root: str, case: dict[str, Any]) -> ConfigResult:
    from ctxaudit.targets.gitreins.loop import (
        Called,
        Crashed,
        Finished,
        LoopDriver,
        ended_reason,
        is_compacted,
    )
    from ctxaudit.targets.gitreins.tree import from_path, load
    from model.config import Caps
    from model.valve import Answer

    warnings: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno >= logging.WARNING:
                warnings.append(record.getMessage()[:300])

    logging.getLogger().addHandler(Collect())
    mods = load(from_path(Path(root)))
    caps = Caps(max_input_tokens=case["max_input_tokens"])
    driver = LoopDriver(
        mods, caps, criteria=1, evaluator_config={"compaction_threshold": case["raw"]}
    )
    compacted: list[bool] = []
    try:
        obs = driver.start()
        if isinstance(obs, Crashed):
            return ConfigResult(repr(obs.error)[:500], [], "crash", warnings)
        for reply in (
            Answer(prompt=case["first"], writes=(None,)),
            Answer(prompt=1, writes=(None,)),
        ):
            if not isinstance(obs, Called):
                break
            obs = driver.answer(reply)
            if isinstance(obs, Called):
                compacted.append(is_compacted(obs.messages))
        if isinstance(obs, Called):
            obs = driver.answer(Answer(prompt=0))
        if isinstance(obs, Finished):
            ended = ended_reason(obs.verdict)
        elif isinstance(obs, Crashed):
            ended = f"crash: {obs.error!r}"[:160]
        else:
            ended = "still running"
        return ConfigResult(None, compacted, ended, warnings)
    finally:
        driver.close()


if __name__ == "__main__":
    _limit()
    line, status = _answer(sys.argv[1:])
    print(line, flush=True)
    if status == 1:
        print(line, file=sys.stderr, flush=True)
    sys.exit(status)
