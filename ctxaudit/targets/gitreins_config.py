"""Run one configuration case against a gitreins tree in a child process with
a memory limit, so a target that blows up on a value is a finding, not a dead
test run.

    python -m ctxaudit.targets.gitreins_config ROOT CASE_JSON   (prints RESULT_JSON)

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
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MEMORY_LIMIT = 1536 * 2**20  # bytes of address space for the child
TIMEOUT = 60.0


@dataclass(frozen=True)
class ConfigResult:
    raised_before_first_call: str | None
    compacted: list[bool]  # for each LLM call after the first
    ended: str  # "verdict", "cap", "llm-failure", "crash: ..." or "killed: ..."
    warnings: list[str]


def _child_run(args: list[str]) -> tuple[Any, str | None]:
    """Run this module as a memory-limited child (without GITREINS_* from our
    environment); return its RESULT payload, or why it gave none."""
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "ctxaudit.targets.gitreins_config", *args],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
            env={k: v for k, v in os.environ.items() if not k.startswith("GITREINS_")},
        )
    except subprocess.TimeoutExpired:
        return None, f"killed: no answer within {TIMEOUT:.0f}s"
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return None, f"killed: exit {proc.returncode}: {tail}"
    return json.loads(lines[-1].removeprefix("RESULT ")), None


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

    from ctxaudit.targets.gitreins import from_path, load
    from ctxaudit.targets.gitreins_loop import ScriptedLLM

    mods = load(from_path(Path(root)))
    out: list[dict[str, Any]] = []
    for section in sections:
        with tempfile.TemporaryDirectory(prefix="ctxaudit-caps-") as tmp:
            (Path(tmp) / ".gitreins").mkdir()
            section = dict(section)
            env = section.pop("env", {})  # GITREINS_MAX_* overrides, set for this case only
            (Path(tmp) / ".gitreins" / "config.yaml").write_text(json.dumps({"evaluator": section}))
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
    from ctxaudit.targets.gitreins import from_path, load
    from ctxaudit.targets.gitreins_loop import (
        Called,
        Crashed,
        Finished,
        LoopDriver,
        ended_reason,
        is_compacted,
    )
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
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    if sys.argv[2] == "caps":
        print("RESULT " + json.dumps(_caps_child(sys.argv[1], json.loads(sys.argv[3]))), flush=True)
    else:
        result = _child(sys.argv[1], json.loads(sys.argv[2]))
        print("RESULT " + json.dumps(result.__dict__), flush=True)
