"""pytest plugin: a failing property test reads on one screen.

Registered by ``tests/conftest.py``. For a test that Hypothesis ran, it

- keeps the log records a target writes during the examples Hypothesis tried
  and threw away (generation, every shrink step) out of the report: the
  "Captured log" section holds the failing example's log only (the one
  Hypothesis replays last). ``--target-log=all`` keeps every example's log;
- prints a failure as: where it failed, the property's message (what the model
  expected, what the target did), the shrunk program with every drawn value,
  and the one command that replays exactly that example (``--replay=BLOB``,
  which runs that example alone: no search, no shrinking).
  ``--failure-format=pytest`` prints pytest's own report instead;
- ``--replay=BLOB`` replays the example a blob encodes (what
  ``@reproduce_failure`` does, without editing the test): :func:`register` installs
  ``ctxaudit.replay``, which also replays the examples ``CTXAUDIT_REPLAY`` names;
- with ``CTXAUDIT_FAILURE_STATS=PATH``, writes each Hypothesis test's phase
  times (time to find a failure, time to shrink it) to PATH as JSON, with those
  of child sessions a test hands over (:func:`add_stats`).

The audit (``CTXAUDIT_RESULTS`` set) reads pytest's own failure text, so the
short format is off there.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shlex
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from ctxaudit import atomic, replay

#: the most frames of the project's own code a report shows
MAX_FRAMES = 6
#: the most lines of the failing example's captured log a report shows
MAX_LOG_LINES = 12

_STATS_KEY = pytest.StashKey[dict[str, Any]]()
_stats: list[dict[str, Any]] = []


def addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ctxaudit", "ctxaudit failure output")
    group.addoption(
        "--target-log",
        choices=("failing", "all"),
        default="failing",
        help="which captured log a Hypothesis failure shows: the failing example's "
        "(default) or every example's, all those Hypothesis tried while searching and "
        "shrinking (thousands of lines)",
    )
    group.addoption(
        "--failure-format",
        choices=("short", "pytest"),
        default="short",
        help="how a Hypothesis failure is printed: short (default: where, the message, the "
        "shrunk program, the replay command) or pytest's full traceback",
    )
    replay.addoption(group)


# ── the failing example's log only ─────────────────────────────────────────


class _Example:
    """Whether the Hypothesis example running now is the one Hypothesis reports.

    Set in the test's thread when each example starts; read by a log filter in
    any thread (a target logs from its own worker threads, which do not see
    Hypothesis's thread-local build context)."""

    shown = True  # outside any Hypothesis example: keep everything


class _DropDiscarded(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return _Example.shown


_patched = False


def _track_examples() -> None:
    """Note at the start and end of every Hypothesis example whether it is the
    final one (the failing example replayed for the report)."""
    global _patched
    if _patched:
        return
    from hypothesis.control import BuildContext

    enter, exit_ = BuildContext.__enter__, BuildContext.__exit__

    def __enter__(self: BuildContext) -> BuildContext:
        _Example.shown = bool(self.is_final)
        return enter(self)

    def __exit__(self: BuildContext, *exc: Any) -> None:
        _Example.shown = True
        exit_(self, *exc)

    BuildContext.__enter__ = __enter__  # type: ignore[method-assign,assignment]
    BuildContext.__exit__ = __exit__  # type: ignore[method-assign]
    _patched = True


# ── the plugin ────────────────────────────────────────────────────────────


class FailureOutput:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.short = config.getoption("--failure-format") == "short" and not os.environ.get(
            "CTXAUDIT_RESULTS"
        )
        self.replayed = config.getoption("--replay")
        if self.short and hasattr(config.option, "force_short_summary"):
            # on CI pytest repeats a failure's whole message in the short summary;
            # the report above is the message, so the summary keeps one line
            config.option.force_short_summary = True

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        config = session.config
        from ctxaudit import profiles

        chosen = config.getoption("--hypothesis-profile", default=None)
        if chosen in profiles.PROFILES:
            profiles.bound_shrinking(chosen)
        if config.getoption("--target-log") == "failing":
            logging_plugin = config.pluginmanager.get_plugin("logging-plugin")
            if logging_plugin is not None:
                _track_examples()
                logging_plugin.report_handler.addFilter(_DropDiscarded())

    @pytest.hookimpl(hookwrapper=True, trylast=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        """Inside Hypothesis's own wrapper: keep each test's raw statistics."""
        from hypothesis.statistics import collector

        outer: Callable[[Any], None] | None = collector.value

        def note(stats: dict[str, Any]) -> None:
            item.stash[_STATS_KEY] = dict(stats)
            if outer is not None:
                outer(stats)

        with collector.with_value(note):  # type: ignore[arg-type]
            yield

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)  # outermost: after Hypothesis's
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, Any, None]:
        outcome = yield
        report: pytest.TestReport = outcome.get_result()
        stats = item.stash.get(_STATS_KEY, None)
        if call.when == "call" and stats is not None:  # a unittest-style machine fails here
            _stats.append(_phase_times(item.nodeid, stats, report.failed))
            _stats[-1]["call_seconds"] = round(call.duration, 3)
        if not (self.short and report.failed and call.when == "call" and call.excinfo):
            return
        printed: list[str] = []
        if self.replayed:  # a replayed example's program is printed, not attached as a note
            printed = [
                b
                for n, b in report.sections
                if n.startswith(("Captured std", "Hypothesis")) and _is_program(b)
            ]
            report.sections = [(n, b) for n, b in report.sections if b not in printed]
        text = short_report(item, call.excinfo.value, self.config, printed=printed)
        if text is not None:
            report.longrepr = text
            # pytest's "Captured log" section stays (the failing example's log only),
            # cut to its last lines
            sections = [
                _cut_log(name, _without_slow_shrink_warning(body)) for name, body in report.sections
            ]
            report.sections = [(name, body) for name, body in sections if body.strip()]

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        path = os.environ.get("CTXAUDIT_FAILURE_STATS")
        if path:
            atomic.write_text(Path(path), json.dumps(_stats, indent=1))


def add_stats(entries: list[dict[str, Any]]) -> None:
    """Phase times a child pytest wrote (a suite run in another interpreter, such as a
    lightspeed-stack tree's), kept with this session's so that they reach
    ``CTXAUDIT_FAILURE_STATS``: this session writes the file last, over the child's."""
    _stats.extend(entries)


#: the options whose values name the target version (``register``'s ``target_options``)
_TARGET_OPTIONS_KEY = pytest.StashKey[list[str]]()


def register(config: pytest.Config, target_options: list[str]) -> None:
    """Print failures as ctxaudit does; ``target_options`` (``--gitreins`` ...) name the
    target version, and a replay command repeats those given."""
    config.stash[_TARGET_OPTIONS_KEY] = list(target_options)
    config.pluginmanager.register(FailureOutput(config), "ctxaudit-failure-output")
    replay.install(config)


def _phase_times(nodeid: str, stats: dict[str, Any], failed: bool) -> dict[str, Any]:
    def seconds(phase: str) -> float:
        return float(stats.get(f"{phase}-phase", {}).get("duration-seconds", 0.0))

    def examples(phase: str) -> int:
        return len(stats.get(f"{phase}-phase", {}).get("test-cases", []))

    find = sum(seconds(p) for p in ("explicit", "reuse", "generate", "target"))
    return {
        "nodeid": nodeid,
        "failed": failed,
        "find_seconds": round(find, 3),
        "shrink_seconds": round(seconds("shrink"), 3),
        "find_examples": sum(examples(p) for p in ("explicit", "reuse", "generate", "target")),
        "shrink_examples": examples("shrink"),
        "stopped_because": stats.get("stopped-because", ""),
    }


def _without_slow_shrink_warning(body: str) -> str:
    """Hypothesis's warning when shrinking hits its time bound speaks of five minutes
    (its default bound); the report says in one line that shrinking stopped early."""
    return re.sub(
        r"WARNING: Hypothesis has spent more than five minutes.*?shrinking\s+performance"
        r" for everyone\.\s*",
        "",
        body,
        flags=re.S,
    )


def _cut_log(name: str, body: str) -> tuple[str, str]:
    if not name.startswith("Captured log"):
        return name, body
    lines = body.splitlines()
    if len(lines) <= MAX_LOG_LINES:
        return name, body
    kept = lines[-MAX_LOG_LINES:]
    head = f"({len(lines) - MAX_LOG_LINES} earlier lines left out)"
    return name, "\n".join([head, *kept])


# ── the short report ──────────────────────────────────────────────────────

_CUT_NOTES = ("Explanation:", "    These lines were", "        /")


def _is_program(text: str) -> bool:
    return "Failing test case" in text or "Falsifying example" in text


def short_report(
    item: pytest.Item,
    error: BaseException,
    config: pytest.Config,
    *,
    printed: list[str] | None = None,
) -> str | None:
    """The failure as the developer reads it, or None when it is not a failure
    Hypothesis found (pytest's own report is kept then). ``printed``: the program
    of a replayed example, which Hypothesis prints instead of attaching it."""
    leaves = list(_leaves(error))
    if not printed and not any(_is_hypothesis_failure(e) for e in leaves):
        return None
    out = _one_failure(item, leaves[0], config, printed or [])
    if len(leaves) > 1:
        # Hypothesis found several distinct failures: the first in full, the others
        # by their message, place and replay command
        for n, exc in enumerate(leaves[1:], start=2):
            full = _one_failure(item, exc, config, [])
            out.append(f"── failure {n} of {len(leaves)} (Hypothesis found more than one) ──")
            out.append(full[0].splitlines()[0])
            out.extend(ln for ln in full if ln.startswith("at  "))
            out.extend("replay:" + ln[3:] for ln in full if "--replay=" in ln)
    return "\n".join(out)


def _leaves(error: BaseException) -> Iterator[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        for sub in error.exceptions:
            yield from _leaves(sub)
    else:
        yield error


def _is_hypothesis_failure(error: BaseException) -> bool:
    notes = "\n".join(getattr(error, "__notes__", []))
    return "Failing test case" in notes or "Falsifying example" in notes or "@reproduce" in notes


def _one_failure(
    item: pytest.Item, error: BaseException, config: pytest.Config, printed: list[str]
) -> list[str]:
    message = str(error) or "(no message)"
    out = [f"{type(error).__name__}: {message}"]
    frames = _frames(error, Path(str(config.rootpath)))
    out.extend(f"{'at' if n == 0 else '  '}  {frame}" for n, frame in enumerate(frames))
    notes = list(getattr(error, "__notes__", [])) + printed
    invariants = _invariant_names()
    blob = None
    program: list[str] = []
    skipping = False
    for note in notes:
        for line in note.splitlines():
            found = replay.parse_blob(line)
            if found:
                blob = replay.blob_text(found[1])
                continue
            if line.startswith("Explanation:"):
                skipping = True
                continue
            if skipping and (line.startswith("    ") or not line.strip()):
                continue
            skipping = False
            if re.fullmatch(r"state\.(\w+)\(\)", line.strip()) and (
                line.strip()[6:-2] in invariants
            ):
                continue  # invariants run after every step; listing them says nothing
            program.append(line)
    while program and not program[-1].strip():
        program.pop()
    out.append("")
    out.extend(program)
    if invariants and any(ln.startswith("state.") for ln in program):
        out.append("(the machine's invariants ran after every step)")
    cut = _shrink_cut_short(item)
    if cut:
        out.append(f"Shrinking stopped early ({cut}): this example may not be minimal.")
    out.append("")
    replayed = config.getoption("--replay", default="")
    if blob or replayed:
        out.append("You can reproduce this example with one command (it runs only this example):")
        out.append("    " + replay_command(item, config, blob or replayed))
    out.append(
        "(pytest's full report: --failure-format=pytest; the target's log of every example "
        "Hypothesis tried: --target-log=all)"
    )
    return out


def _frames(error: BaseException, root: Path) -> list[str]:
    """The project's own frames of the traceback, innermost first."""
    frames: list[str] = []
    tb = error.__traceback__
    while tb is not None:
        path = Path(tb.tb_frame.f_code.co_filename)
        try:
            rel = path.resolve().relative_to(root)
        except ValueError:
            rel = None
        if rel is not None and not rel.parts[0].startswith("."):
            frames.append(f"{rel}:{tb.tb_lineno} in {tb.tb_frame.f_code.co_name}")
        tb = tb.tb_next
    return frames[::-1][:MAX_FRAMES]


def _invariant_names() -> set[str]:
    from hypothesis.stateful import RuleBasedStateMachine

    names: set[str] = set()
    todo: list[type] = [RuleBasedStateMachine]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        for name, value in vars(cls).items():
            if getattr(value, "hypothesis_stateful_invariant", None) is not None:
                names.add(name)
    return names


def _shrink_cut_short(item: pytest.Item) -> str:
    """Why shrinking stopped before it was done, or "" when it finished."""
    from hypothesis.internal.conjecture import engine

    stats = item.stash.get(_STATS_KEY, None)
    reason = str((stats or {}).get("stopped-because", ""))
    if "shrinking was very slow" in reason:
        return f"the bound of {engine.MAX_SHRINKING_SECONDS:g} s on shrinking"
    if "shrunk test case" in reason:
        return reason
    return ""


def replay_command(item: pytest.Item, config: pytest.Config, blob: str) -> str:
    """``bin/ctxaudit test NODEID [target options] --replay=BLOB`` (``ctxaudit test``
    installed: :func:`ctxaudit.replay.invocation`), with the profile when it is not the
    default (the profile sets how many steps a program may take).

    A suite run as a child (``CTXAUDIT_REPLAY_COMMAND`` set by its parent test)
    replays through the parent's command, which forwards ``--replay``."""
    from ctxaudit import profiles
    from ctxaudit.replay import invocation

    via = os.environ.get("CTXAUDIT_REPLAY_COMMAND")
    if via:  # a child run (a lightspeed-stack tree's environment): its parent's command
        return f"{via} --replay={blob}"
    words = [invocation(), "test", *_located(item, config)]
    for option in config.stash.get(_TARGET_OPTIONS_KEY, []):
        value = config.getoption(option, default="")
        if value:
            words.append(f"{option}={value}")
    words.append(f"--replay={blob}")
    profile = config.getoption("--hypothesis-profile", default=None) or os.environ.get(
        "CTXAUDIT_PROFILE", profiles.DEFAULT
    )
    prefix = f"CTXAUDIT_PROFILE={profile} " if profile != profiles.DEFAULT else ""
    return prefix + shlex.join(words)


#: ctxaudit's pytest setup, as ``-p`` names it
_PLUGIN = "ctxaudit.pytest_plugin"


def _located(item: pytest.Item, config: pytest.Config) -> list[str]:
    """``item`` named so ``ctxaudit test`` finds it. It runs in the root of ctxaudit's
    files, so a test there is named by its node id; a test of a suite outside them (the
    concerns' shared suites of an installed ctxaudit, a target package's own) by its
    whole path, its node ids counted from where this run counted them. Outside
    ``tests/`` no conftest of ctxaudit's loads its pytest setup: a run that named it
    (``-p ctxaudit.pytest_plugin``, as the audit runs every suite) has the command name
    it too (the options a replay repeats are the setup's)."""
    from ctxaudit.paths import REPO_ROOT

    root = REPO_ROOT.resolve()
    path = Path(str(item.path)).resolve()
    named = _PLUGIN in (getattr(config.option, "plugins", None) or [])
    plugin = ["-p", _PLUGIN] if named and not path.is_relative_to(root / "tests") else []
    tail = item.nodeid[item.nodeid.find("::") :] if "::" in item.nodeid else ""
    if path.is_relative_to(root):
        return [f"{path.relative_to(root)}{tail}", *plugin]
    return [f"{path}{tail}", *plugin, f"--rootdir={config.rootpath}"]
