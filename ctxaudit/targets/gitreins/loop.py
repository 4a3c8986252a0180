"""Drive gitreins' ``AgenticEvaluator.evaluate`` one LLM call at a time.

The evaluator runs in a worker thread against a scripted LLM client. Each
``chat()`` call hands the messages it received to the test and blocks until
the test says what the LLM does (an answer or a failure). So a test advances
the real loop exactly one LLM call per step and observes it only through
public boundaries: the messages the LLM receives, ``EvalCap``'s public
counters, and the returned ``Verdict``.
"""

from __future__ import annotations

import copy
import json
import os
import queue
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

from ctxaudit.outcomes import CouldNotCheck
from ctxaudit.targets.gitreins.tree import GitreinsModules
from model.config import Caps
from model.valve import Answer, Failure

#: seconds the loop may take between two LLM calls: far above any step's duration
#: (milliseconds), so it only turns a hang into an answer; one that outlives it is
#: CouldNotCheck, never a verdict about the target (a slow machine is no finding)
STEP_TIMEOUT = 30.0


@dataclass(frozen=True)
class Called:
    """The loop called the LLM with these messages."""

    messages: list[dict[str, Any]]


@dataclass(frozen=True)
class Finished:
    verdict: Any  # the target's Verdict


@dataclass(frozen=True)
class Crashed:
    error: BaseException


Observation = Called | Finished | Crashed


class _Stop(BaseException):
    """Ends a still-running loop at teardown (not an Exception: not caught)."""


@dataclass
class ScriptedLLM:
    calls: queue.Queue[Observation] = field(default_factory=queue.Queue)
    replies: queue.Queue[Any] = field(default_factory=queue.Queue)

    def chat(self, messages: list[dict[str, Any]], **_: Any) -> Any:
        self.calls.put(Called(copy.deepcopy(messages)))
        try:
            reply = self.replies.get(timeout=STEP_TIMEOUT * 4)
        except queue.Empty:  # the test never answered: the target must not see an error
            self.calls.put(
                Crashed(CouldNotCheck(f"no reply to the LLM call for {STEP_TIMEOUT * 4:g} s"))
            )
            raise _Stop from None
        if isinstance(reply, BaseException):
            raise reply
        return reply


def verdict_json(n: int, verdict: str = "COMPLETE") -> str:
    """The content of a scripted verdict; its summary identifies it."""
    return json.dumps({"verdict": verdict, "items": [], "summary": f"scripted-verdict-{n}"})


class LoopDriver:
    """One evaluation of a task with ``criteria`` criteria under ``caps``."""

    def __init__(
        self,
        mods: GitreinsModules,
        caps: Caps,
        *,
        criteria: int,
        evaluator_config: dict[str, Any] | None = None,
        config: dict[str, Any] | None = None,
    ) -> None:
        """``config``: the whole ``.gitreins/config.yaml`` instead of the default (an
        ``evaluator:`` section with the pre-screen off, full file scope and
        ``evaluator_config``); e.g. ``{}``, a file with no evaluator section (V1)."""
        self.mods = mods
        if config is None:
            config = {"evaluator": {"prescreen": False, "file_scope": "full"}}
            config["evaluator"].update(evaluator_config or {})
        # Without an evaluator section the pre-screen (0.15.0+) is on by default and
        # would look for a provider key: the task says a caller already ran it
        # (gitreins' forward hook, ``task["prescreen"]``; a value that is not a
        # PrescreenResult means none), so the loop runs as it does with it off.
        self._task_extra: dict[str, Any] = {} if "evaluator" in config else {"prescreen": False}
        # JSON is YAML: gitreins reads it with yaml.safe_load.
        workdir = _workdir(json.dumps(config))
        self.cap = mods.eval_cap.EvalCap(
            max_iterations=float(caps.max_iterations),
            max_seconds=float(caps.max_seconds),
            max_input_tokens=int(caps.max_input_tokens),
            max_output_tokens=int(caps.max_output_tokens),
            tool_call_weight=float(caps.tool_call_weight),
        )
        self.llm = ScriptedLLM()
        self.evaluator = mods.evaluator.AgenticEvaluator(
            self.llm, workdir=str(workdir), eval_cap=self.cap
        )
        self.criteria = criteria_texts(criteria)
        self._answers = 0
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.finished = False

    def _run(self) -> None:
        task: dict[str, Any] = {
            "id": "ctxaudit-task",
            "title": "ctxaudit",
            "criteria": self.criteria,
        }
        task |= self._task_extra
        try:
            verdict = self.evaluator.evaluate(task)
        except _Stop:
            return
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            self.llm.calls.put(Crashed(exc))
            return
        self.llm.calls.put(Finished(verdict))

    def _next(self) -> Observation:
        try:
            obs = self.llm.calls.get(timeout=STEP_TIMEOUT)
        except queue.Empty:
            raise CouldNotCheck(
                f"the loop neither called the LLM nor ended within {STEP_TIMEOUT:g} s"
            ) from None
        if isinstance(obs, Crashed) and isinstance(obs.error, CouldNotCheck):
            raise obs.error
        if not isinstance(obs, Called):
            self.finished = True
        return obs

    def start(self) -> Observation:
        self._thread.start()
        return self._next()

    def answer(self, reply: Answer, *, usage: bool = True) -> Observation:
        """The LLM answers the pending call. ``usage=False``: the response carries no
        usage object (``LLMResponse.usage`` is None), so it reports no tokens (B1);
        ``reply`` then must meter nothing. An answer without tool calls carries
        ``reply.verdict`` as its verdict, or no text at all when that is None."""
        llm = self.mods.llm
        self._answers += 1
        metered = reply.prompt + reply.completion + reply.cache_read + reply.cache_write
        assert usage or metered == 0, "a response without usage reports no tokens"
        report = llm.LLMUsage(
            prompt_tokens=reply.prompt,
            completion_tokens=reply.completion,
            cache_read_tokens=reply.cache_read,
            cache_write_tokens=reply.cache_write,
        )
        calls = []
        for k, key in enumerate(reply.writes):
            tc_id = f"call-{self._answers}-{k}"
            if key is None:
                calls.append(llm.ToolCall(id=tc_id, name="sandbox_read", arguments={"key": "x"}))
            else:
                args = {"key": key, "content": "PASS: checked"}
                calls.append(llm.ToolCall(id=tc_id, name="sandbox_write", arguments=args))
        content = None
        if not calls and reply.verdict is not None:
            content = verdict_json(self._answers, reply.verdict)
        response = llm.LLMResponse(
            content=content, tool_calls=calls, usage=report if usage else None
        )
        self.llm.replies.put(response)
        return self._next()

    def fail(self, failure: Failure) -> Observation:
        self.llm.replies.put(make_exception(failure))
        return self._next()

    def rerun(self, caps: Caps) -> Observation:
        """Evaluate the task again with the same evaluator (a fresh EvalCap, as
        a caller sets it through the public ``eval_cap`` attribute)."""
        assert self.finished, "rerun before the first run reported its end"
        # the run's thread has reported its end and is returning: wait for it to
        self._thread.join(timeout=STEP_TIMEOUT)
        if self._thread.is_alive():
            raise CouldNotCheck(
                f"the first run reported its end but its thread still ran {STEP_TIMEOUT:g} s later"
            )
        self.cap = self.mods.eval_cap.EvalCap(
            max_iterations=float(caps.max_iterations),
            max_seconds=float(caps.max_seconds),
            max_input_tokens=int(caps.max_input_tokens),
            max_output_tokens=int(caps.max_output_tokens),
            tool_call_weight=float(caps.tool_call_weight),
        )
        self.evaluator.eval_cap = self.cap
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.finished = False
        return self.start()

    def assert_no_more_calls(self) -> None:
        assert self.llm.calls.empty(), (
            f"the run ended, then the LLM was called: {self.llm.calls.get()!r}"
        )

    def counters(self) -> dict[str, float]:
        c = self.cap
        return {
            "input": c.cumulative_input_tokens,
            "output": c.cumulative_output_tokens,
            "cache_read": c.cumulative_cache_read,
            "cache_write": c.cumulative_cache_write,
            "credit": c.iteration_credit,
        }

    def close(self) -> None:
        if self._thread.is_alive():
            self.llm.replies.put(_Stop())
            self._thread.join(timeout=STEP_TIMEOUT)


#: workdirs by the process that made them and the config they hold, reused while they
#: hold exactly that config. A forked child (a mutant's run) never reuses or removes its
#: parent's: it makes its own, in its own temporary folder (mutation/forking.py).
_WORKDIRS: dict[tuple[int, str], tempfile.TemporaryDirectory[str]] = {}


def _workdir(config_text: str) -> Path:
    """A folder that holds ``.gitreins/config.yaml`` with ``config_text`` and nothing
    else, as a fresh temporary folder would. One per config is reused while it is
    still exactly that (checked before each use: a target that writes there gets a
    new one): creating and removing a folder per evaluation cost about 4 ms, as much
    as a whole step, and a failure's shrinking runs hundreds of evaluations."""
    key = (os.getpid(), config_text)
    held = _WORKDIRS.get(key)
    if held is not None:
        root = Path(held.name)
        config = root / ".gitreins" / "config.yaml"
        try:
            pristine = (
                os.listdir(root) == [".gitreins"]
                and os.listdir(root / ".gitreins") == ["config.yaml"]
                and config.read_text(encoding="utf-8") == config_text
            )
        except OSError:
            pristine = False
        if pristine:
            return root
        held.cleanup()
    held = tempfile.TemporaryDirectory(prefix="ctxaudit-gr-")
    root = Path(held.name)
    (root / ".gitreins").mkdir()
    (root / ".gitreins" / "config.yaml").write_text(config_text)
    _WORKDIRS[key] = held
    return root


def make_exception(failure: Failure) -> BaseException:
    """The exception an LLM client raises for ``failure``.

    As real clients do, errors arrive wrapped: a transport failure is a
    ``requests.ConnectionError`` two links down the chain (raised from a
    wrapper, during the handling of another), and any other error carries a
    context chain that loops back to itself (as re-raising in a ``finally``
    produces). What the error is does not change; a target must read through
    the chain, and terminate on it."""
    if failure.transport:
        inner = requests.ConnectionError(f"Max retries exceeded with url: /chat ({failure.text})")
        middle = RuntimeError("while calling the provider")
        middle.__context__ = inner
        outer = RuntimeError(f"LLM call failed: {inner}")
        outer.__cause__ = middle
        return outer
    if failure.status is not None:
        response = requests.Response()
        response.status_code = failure.status
        return requests.HTTPError(
            f"{failure.status} Client Error: {failure.text}", response=response
        )
    error = RuntimeError(failure.text)
    cleanup = RuntimeError("during cleanup")
    cleanup.__context__ = error
    error.__context__ = cleanup
    return error


def replay(
    mods: GitreinsModules,
    caps: Caps,
    *,
    steps: list[Answer | Failure],
    criteria: int = 3,
    ratio: object = 0.9,
) -> list[Observation]:
    """Run one evaluation through ``steps`` and return what was observed: the
    first LLM call, then what followed each step (until the run ended).
    This is the form in which counterexamples are printed and findings kept."""
    driver = LoopDriver(
        mods, caps, criteria=criteria, evaluator_config={"compaction_threshold": ratio}
    )
    try:
        seen = [driver.start()]
        for step in steps:
            if not isinstance(seen[-1], Called):
                break
            seen.append(driver.answer(step) if isinstance(step, Answer) else driver.fail(step))
        return seen
    finally:
        driver.close()


def compactions(observations: list[Observation]) -> int:
    """How many of the LLM calls after the first received a compacted conversation."""
    return sum(1 for o in observations[1:] if isinstance(o, Called) and is_compacted(o.messages))


# ── reading the messages the LLM receives ─────────────────────────────────


def is_compacted(messages: list[dict[str, Any]]) -> bool:
    """V3's shape: exactly a system prompt and one user (progress) prompt."""
    return (
        len(messages) == 2
        and messages[0].get("role") == "system"
        and messages[1].get("role") == "user"
    )


def criteria_texts(n: int) -> list[str]:
    """The acceptance criteria a LoopDriver gives its task (numbered texts)."""
    return [f"criterion number {i} holds" for i in range(n)]


def progress_lists(prompt: str, criteria: list[str]) -> tuple[set[int], set[int]]:
    """Which criteria the progress prompt lists as verified, and as still to
    verify. Reads only the two progress sections, not the full criteria list
    appended after them."""
    verified_part, todo_part = "", ""
    head, _, _ = prompt.partition("## INSTRUCTIONS")
    if "Still to verify" in head:
        verified_part, _, todo_part = head.partition("Still to verify")
    else:
        verified_part = head
    verified = {i for i, c in enumerate(criteria) if f"✓ {c}" in verified_part}
    todo = {i for i, c in enumerate(criteria) if f". {c}" in todo_part}
    return verified, todo


#: gitreins' summary when the LLM answered without tool calls and without text
EMPTY_ANSWER = "Evaluator returned empty response."


def ended_verdict(verdict: Any) -> str:
    """The run's verdict as the target returned it (``Verdict.verdict``)."""
    return str(getattr(verdict, "verdict", verdict))


def ended_reason(verdict: Any) -> str:
    """Classify the target's verdict as the model's ``Ended.reason``."""
    summary = str(getattr(verdict, "summary", ""))
    if summary.startswith("scripted-verdict-") or summary == EMPTY_ANSWER:
        return "verdict"
    if summary.startswith("Evaluator error: LLM call failed"):
        return "llm-failure"
    if "Cap exceeded" in summary or summary.startswith("Partial verdict"):
        return "cap"
    return f"unknown ({summary[:80]!r})"
