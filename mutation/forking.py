"""The worker's process plumbing: the pinned package, a forked child per mutant."""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import json
import os
import select
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mutation.seeding import SEED

RunItems = Callable[[list[Any], bool], dict[str, Any]]


class _PinFinder(importlib.abc.MetaPathFinder):
    """Resolve one package (and its submodules) from the work copy only: a top-level
    package, or one inside a namespace package (``google.adk``: the namespace's other
    portions, such as ``google.genai``, are still found where they are installed; pinning
    ``google`` itself would hide them)."""

    def __init__(self, package: str, root: str) -> None:
        self.package = package
        self.root = root

    def find_spec(self, fullname, path=None, target=None):  # type: ignore[no-untyped-def]
        if fullname == self.package:
            parent = os.path.join(self.root, *fullname.split(".")[:-1])
            return importlib.machinery.PathFinder.find_spec(fullname, [parent])
        return None


def pin_package(package: str, root: str) -> None:
    for name in list(sys.modules):
        if name == package or name.startswith(package + "."):
            del sys.modules[name]
    sys.meta_path.insert(0, _PinFinder(package, root))
    sys.path.insert(0, root)


@dataclass
class _Job:
    mutant: dict[str, Any]
    pid: int
    fd: int
    deadline: float
    started: float
    buf: bytes = b""
    tests: int = 0
    scratch: str = ""


def _run_protocol(item: Any, nextitem: Any) -> list[Any]:
    from _pytest.runner import runtestprotocol

    return runtestprotocol(item, nextitem=nextitem, log=False)


def _drain(job: _Job) -> bool:
    """Read what the child wrote; True once the pipe is closed."""
    while True:
        try:
            chunk = os.read(job.fd, 65536)
        except BlockingIOError:
            return False
        if not chunk:
            return True
        job.buf += chunk
        r, _, _ = select.select([job.fd], [], [], 0)
        if not r:
            return False


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _wait(job: _Job, block: bool) -> tuple[str, dict[str, Any]]:
    """Collect a child: ('pass'|'fail'|'timeout'|'crashed'|'died'|'error', payload).

    'timeout': this process killed the child at its deadline (a verdict: detected).
    'died': something else ended the child by a signal (the OOM killer, an operator, a
    crash of the interpreter): the run says nothing about the mutant, so the caller
    runs it again and never takes it for a kill; the payload names the signal.
    'error': the child's own code (not a test) raised: no verdict either.
    'crashed': the child exited otherwise (a mutant that ends the process): detected."""
    timed_out = False
    if block:
        remaining = job.deadline - time.monotonic()
        while remaining > 0:
            r, _, _ = select.select([job.fd], [], [], remaining)
            if r and _drain(job):
                break
            remaining = job.deadline - time.monotonic()
        else:
            timed_out = True
    if timed_out:
        with contextlib.suppress(ProcessLookupError):
            os.kill(job.pid, signal.SIGKILL)
    _, status = os.waitpid(job.pid, 0)
    os.close(job.fd)
    if job.scratch:
        shutil.rmtree(job.scratch, ignore_errors=True)
    code = os.waitstatus_to_exitcode(status)
    if timed_out:
        return "timeout", {}
    try:
        payload = json.loads(job.buf.decode() or "{}")
    except ValueError:
        payload = {}
    if code == 0:
        return "pass", payload
    if code == 1 and "failed" in payload:
        return "fail", payload
    if code < 0:
        return "died", {"reason": f"died by {signal_name(-code)}", "signal": -code}
    if code == 3 and "error" in payload:  # the child's own plumbing raised: no verdict
        why = f"ctxaudit's own error in the mutant's child: {payload['error']}"
        return "error", {"reason": why}
    reason = payload.get("error") or f"exit {code}"
    return "crashed", {"reason": reason}


def activate(mutant_name: str, seed: int) -> None:
    """Make ``mutant_name`` the active mutant ("stats": record which functions run)."""
    from mutmut.mutation import trampoline

    SEED[0] = seed
    os.environ["CTXAUDIT_MUTATION_SEED"] = str(seed)
    if mutant_name == "stats":
        # process-local only: a test that runs the target in a subprocess must
        # run it unmutated (mutmut's stats mode needs its own config there)
        trampoline._mutant_under_test = "stats"
        os.environ.pop("MUTANT_UNDER_TEST", None)
    else:
        # also in the environment: a subprocess that imports the work copy
        # runs the same mutant
        trampoline.set_mutant_under_test(mutant_name)


def _child(
    run_items: RunItems,
    mutant_name: str,
    items: list[Any],
    stop: bool,
    wfd: int,
    scratch: str,
    seed: int,
) -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        activate(mutant_name, seed)
        # A mutant may turn a path into another (":memory:" into a file
        # name): let it write in a scratch folder, never the repository. The
        # parent removes the folder, also when it had to kill the child; the
        # child's temporary files go there too (it ends in os._exit, which runs
        # no cleanup: a folder it made elsewhere would be left behind).
        os.chdir(scratch)
        tempfile.tempdir = os.environ["TMPDIR"] = scratch
        result = run_items(items, stop)
        payload = json.dumps(result).encode()
        code = 1 if result["failed"] else 0
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        payload = json.dumps({"error": repr(exc)}).encode()
        code = 3
    view = memoryview(payload)
    while view:
        view = view[os.write(wfd, view) :]
    os.close(wfd)
    os._exit(code)


def fork_run(
    run_items: RunItems,
    mutant: dict[str, Any],
    items: list[Any],
    timeout: float,
    stop: bool,
    seed: int = 0,
) -> _Job:
    rfd, wfd = os.pipe()
    scratch = tempfile.mkdtemp(prefix="ctxaudit-mutant-")
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        _child(run_items, mutant["name"], items, stop, wfd, scratch, seed)
    os.close(wfd)
    now = time.monotonic()
    return _Job(mutant, pid, rfd, now + timeout, now, tests=len(items), scratch=scratch)
