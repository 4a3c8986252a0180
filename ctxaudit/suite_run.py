"""A target version's suites run in a pytest process of their own: under the python and
environment the target's suites run in, with ctxaudit's pytest plugins, the results and
the shape coverage read back from the files they write. Every process the audit starts
(the suites, the fix audit's replays, the mutation run) runs under
:func:`run_with_ticker`, in a process group that dies with the audit."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxaudit import environment, own_tests, shapes, targets
from ctxaudit.paths import bytecode_environ
from ctxaudit.suite import REPO as REPO_ROOT
from ctxaudit.targets.base import Described as Target
from ctxaudit.timing import shown_command


def _not_per_target() -> list[str]:
    """Tests about the suites themselves (release history), not about one target
    version: left out of every run."""
    return [p for t in targets.all_targets() for p in t.suite_ignores]


Ticker = Callable[[str], None]


def run_with_ticker(
    cmd: list[str],
    env: dict[str, str],
    ticker: Ticker | None,
    preload: Sequence[str] | None = None,
    cwd: Path | None = None,
) -> tuple[int, str, float]:
    """Run a command in ``cwd`` (default: the root of ctxaudit's files, where the node ids
    of its suites are), calling ``ticker`` with a status line every second.

    The command runs in a process group of its own that dies with the audit
    (``ctxaudit/procs.py``); once the audit is interrupted this raises
    ``procs.Interrupted`` instead of returning, so no verdict is read from a run that
    was stopped. With ``preload`` (the modules its environment imports at start), a
    ``python -m`` command is forked from a warm interpreter that has imported them
    (``ctxaudit/warm.py``), or run cold when it cannot be."""
    from ctxaudit import procs, warm

    started = time.monotonic()
    cwd = REPO_ROOT if cwd is None else cwd  # read at the call: a test may move the root

    def tick() -> None:
        if ticker is not None:
            ticker(f"{time.monotonic() - started:.0f} s")

    if preload is not None:
        with tempfile.TemporaryDirectory(prefix="ctxaudit-warm-") as tmp:
            out = Path(tmp) / "output"
            code = warm.run(cmd, env, cwd, out, preload, tick=tick)
            procs.check()
            if code is not None:
                output = out.read_text(encoding="utf-8", errors="replace")
                return code, output, time.monotonic() - started
    with tempfile.TemporaryFile("w+") as cold:
        with procs.spawn(
            cmd, env, cwd=cwd, stdout=cold, stderr=subprocess.STDOUT, text=True
        ) as proc:
            while proc.poll() is None:
                tick()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=1.0)
        procs.check()
        cold.seek(0)
        return proc.returncode, cold.read(), time.monotonic() - started


def run_pytest(
    target: Target,
    paths: list[str],
    profile: str,
    seed: int | None,
    extra_env: dict[str, str],
    ticker: Ticker | None = None,
    shapes_out: list[dict[str, Any]] | None = None,
    environment_out: dict[str, str] | None = None,
    errors_out: list[str] | None = None,
) -> tuple[int, list[dict[str, Any]], str, float]:
    """Run pytest on ``paths`` for ``target`` in a fresh process (under the python and
    environment the target's suites run in); ``shapes_out`` takes the shape coverage
    the suites counted (:mod:`ctxaudit.shapes`), ``environment_out`` what the process
    imported and the import variables it took from ours (:mod:`ctxaudit.environment`),
    ``errors_out`` each collection error in one line (its exception, where raised)."""
    kind = targets.get(target.kind)
    with tempfile.TemporaryDirectory(prefix="ctxaudit-") as tmp:
        results = Path(tmp) / "results.json"
        python, base_env = sys.executable, bytecode_environ(os.environ)
        process = kind.suite_process(target, Path(tmp))
        if process is not None:
            python, base_env = process
        cmd = [python, "-m", "pytest", *paths, "-q", "-p", "no:cacheprovider"]
        cmd += ["-p", "ctxaudit.pytest_plugin", "-p", "ctxaudit.pytest_results"]
        cmd += ["--show-capture=no", "--tb=long"]
        cmd += [f"--ignore={p}" for p in _not_per_target()]
        cmd += kind.suite_args(target.spec)
        root = rootdir_of(paths)
        if root is not None:
            cmd.append(f"--rootdir={root}")
        if seed is not None:
            cmd.append(f"--hypothesis-seed={seed}")
        env = {**base_env, "CTXAUDIT_PROFILE": profile, "CTXAUDIT_RESULTS": str(results)}
        env["CTXAUDIT_SHAPES"] = str(Path(tmp) / "shapes.json")
        env.update(extra_env)
        status, output, elapsed = run_with_ticker(cmd, env, ticker, _preload(kind))
        payload = json.loads(results.read_text(encoding="utf-8")) if results.exists() else {}
        tests = payload.get("tests", [])
        if environment_out is not None:
            environment_out.update(payload.get("imported", {}))
            environment_out.update(environment.inherited(env, os.environ))
        if shapes_out is not None:
            shapes_out.extend(shapes.load(Path(env["CTXAUDIT_SHAPES"])))
        if errors_out is not None:
            errors_out.extend(str(e.get("why")) for e in payload.get("collect_errors", []))
    return status, tests, output, elapsed


def _preload(kind: object) -> Sequence[str] | None:
    """What a target preloads in a warm interpreter (:attr:`BaseTarget.preload`); a
    target without the attribute (not built on ``BaseTarget``) runs cold."""
    preload = getattr(kind, "preload", None)
    return None if preload is None else list(preload)


def rootdir_of(paths: Sequence[str]) -> Path | None:
    """Where the node ids of suites that live outside ctxaudit's files (a target
    package's own) are counted from: the folder that holds them all. Without it pytest
    counts from the common folder of them and of where it runs, so a test's id (and a
    known finding's check found by it) would depend on where ctxaudit is."""
    files = [Path(p.split("::")[0]) for p in paths]
    if not files or not all(f.is_absolute() for f in files):
        return None
    if any(f.resolve().is_relative_to(REPO_ROOT.resolve()) for f in files):
        return None
    common = Path(os.path.commonpath([str(f.resolve()) for f in files]))
    return common if common.is_dir() else common.parent


@dataclass(frozen=True)
class OwnRun:
    """A run of a target's own tests on one tree: each test's record (``nodeid``,
    ``outcome``, ...: ``ctxaudit/pytest_results.py``), or why they did not run (then no
    record is evidence of anything)."""

    tests: list[dict[str, Any]]
    error: str = ""

    def failed(self) -> set[str]:
        """The tests that failed (in their setup, call or teardown)."""
        return {t["nodeid"] for t in self.tests if t["outcome"] == "failed"}


#: runs a target's own tests on a tree (a copy of the version's): all those its
#: declaration selects, or only the node ids given
OwnTestsRunner = Callable[[Path, Sequence[str]], OwnRun]


def _here(kind: Any) -> Callable[[Target, Path], tuple[str, dict[str, str]]]:
    """The process a target's own tests run in when its suites run in this interpreter
    (gitreins): this one, with the tree's copy first on the path, as the mutation
    audit's peer run lays out its work copy. A target whose suites have an environment
    of their own but name none for its own tests cannot run them (an error, reported as
    could not check)."""

    def process(copy: Target, tmp: Path) -> tuple[str, dict[str, str]]:
        if kind.suite_process(copy, tmp) is not None:
            raise targets.TargetError(
                f"{kind.name}: its suites run in their own environment and it names none "
                "for its own tests (peer_process)"
            )
        env = bytecode_environ(dict(os.environ))
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [copy.spec, env.get("PYTHONPATH")]))
        env["TMPDIR"] = str(tmp)
        return sys.executable, env

    return process


def own_tests_runner(target: Target, ticker: Ticker | None = None) -> OwnTestsRunner:
    """How the fix audit runs ``target``'s own tests on a copy of its tree: the tests its
    ``mutation.toml`` declares (``ctxaudit/own_tests.py``), in the version's peer
    environment with the copy first on the path (the target's ``peer_process``; for a
    target whose suites run in this interpreter, this one: :func:`_here`), telling
    ``ticker`` how long a run has taken. A target that declares none gets a runner
    whose every run is could-not-check, saying so."""
    kind = targets.get(target.kind)
    scope = kind.mutation
    process = getattr(kind, "peer_process", None) or _here(kind)
    suite = None
    if scope is not None and scope.peer and scope.config is not None:
        suite = own_tests.declared(scope.config, scope.section)
    if suite is None:
        # asked for (--own-tests), none to run: the check did not happen, and says why,
        # never an empty section that reads as passing
        where = "" if scope is None else f" (no [{scope.section}.peer] in its mutation.toml)"
        why = f"{kind.name} declares no own tests to run{where}"
        return lambda _tree, _only: OwnRun([], why)

    def run(tree: Path, only: Sequence[str]) -> OwnRun:
        try:
            root = kind.peer_suite(kind.resolve(target.spec, target.repo))
            if root is None:
                return OwnRun([], "this version ships no tests of its own")
            files = list(only) or own_tests.select_tests(root, suite)
            with tempfile.TemporaryDirectory(prefix="ctxaudit-own-") as tmp:
                copy = Target(target.kind, str(tree), target.version, target.repo)
                python, env = process(copy, Path(tmp))
                results = Path(tmp) / "results.json"
                env["CTXAUDIT_RESULTS"] = str(results)
                cmd = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
                cmd += ["-p", "ctxaudit.pytest_results", *suite.args(root), *files]
                what = f"its own tests on {tree.name}" + (f" ({len(only)})" if only else "")
                tick = None if ticker is None else (lambda t: ticker(f"{what}, {t}"))
                status, output, _ = run_with_ticker(cmd, env, tick, cwd=root)
                payload = (
                    json.loads(results.read_text(encoding="utf-8")) if results.exists() else {}
                )
        except Exception as exc:  # noqa: BLE001 - an environment that does not build
            # the report's words: no path of this machine (a build log's, in the cache)
            return OwnRun([], shown_command(f"{type(exc).__name__}: {str(exc)[:300]}"))
        tests = payload.get("tests", [])
        if status not in (0, 1) or not tests:
            errors = [str(e.get("why")) for e in payload.get("collect_errors", [])]
            why = errors[0] if errors else (output.strip().splitlines() or ["no output"])[-1]
            return OwnRun([], f"pytest exit {status}: {why}")
        return OwnRun(tests)

    return run
