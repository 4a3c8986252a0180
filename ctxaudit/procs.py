"""The audit's child processes: started so that none outlives the audit, stopped together.

Every child the audit runs (a pytest process per suite, ``python -m mutation``) is
started by :func:`spawn` under a small guard process (``python ctxaudit/procs.py
--guard PARENT -- CMD...``) that leads a process group of its own:

- the guard asks the kernel for SIGTERM when its parent dies (Linux
  ``prctl(PR_SET_PDEATHSIG)``) and answers SIGTERM by killing its whole group with
  SIGKILL: the command and everything it started (the lightspeed trees' python, the
  mutation worker's forks), so a SIGKILLed audit leaves no orphan running;
- a child in a group of its own does not get the terminal's Ctrl-C: only the audit
  does, and :func:`terminate_all` stops every live group (SIGINT first, so pytest and
  mutation clean up; SIGKILL after :data:`GRACE` seconds).

:func:`on_signals` turns SIGINT and SIGTERM into one ``KeyboardInterrupt`` in the main
thread and marks the audit interrupted: from then on :func:`spawn` refuses to start a
child and :func:`check` raises :class:`Interrupted` in whichever thread runs one, so no
report or cache entry is written for work that did not finish.

:func:`temp_root` gives the audit one temporary folder (``ctxaudit-run-<pid>-*``) that
every temporary file of the audit and of its children (``TMPDIR``) goes in, removed when
the audit ends however it ends; one left by a SIGKILLed audit is removed by the next.

Fault injection for the tests: with ``CTXAUDIT_PAUSE_AT=<point>`` the audit writes the
file ``CTXAUDIT_PAUSE_MARKER`` when it reaches ``<point>`` (:func:`pause`) and waits
there until it is interrupted, so a test can signal it at exactly that point.

Standard library only: the guard runs it as a script.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

#: seconds a child group gets to exit after SIGINT before it is killed
GRACE = 3.0
#: how long :func:`pause` waits for the signal at most
PAUSE_S = 120.0
_PR_SET_PDEATHSIG = 1
_ROOT_PREFIX = "ctxaudit-run-"


class Interrupted(KeyboardInterrupt):
    """The audit was interrupted (SIGINT or SIGTERM) while this work ran: it did not
    finish, and nothing may claim a verdict from it."""


class _State:
    def __init__(self) -> None:
        # reentrant: the signal handler runs in the main thread, which may hold it
        self.lock = threading.RLock()
        self.interrupted = threading.Event()
        # group id -> its guard (None: a group started elsewhere, :func:`adopted`)
        self.groups: dict[int, subprocess.Popen[Any] | None] = {}
        self.temp: Path | None = None
        self.signal: int | None = None


_state = _State()


def interrupted() -> bool:
    return _state.interrupted.is_set()


def check() -> None:
    """Raise :class:`Interrupted` when the audit was interrupted."""
    if _state.interrupted.is_set():
        raise Interrupted(f"interrupted by signal {_state.signal}")


def reset() -> None:
    """Forget an earlier interruption (a new audit in the same process: the tests)."""
    with _state.lock:
        _state.interrupted.clear()
        _state.signal = None


def live_groups() -> list[int]:
    with _state.lock:
        return list(_state.groups)


def _guard_cmd() -> list[str]:
    # -I: the guard imports nothing but the standard library, whatever the environment
    return [sys.executable, "-I", str(Path(__file__).resolve()), "--guard", str(os.getpid())]


@contextlib.contextmanager
def spawn(cmd: list[str], env: dict[str, str] | None = None, **popen: Any) -> Iterator[Any]:
    """Start ``cmd`` (``subprocess.Popen`` keywords) under a guard, in a process group
    of its own, registered until the block ends; a group still running then (the block
    raised) is stopped. Raises :class:`Interrupted` instead of starting anything once
    the audit is interrupted."""
    env = child_environ(env)
    with _state.lock:
        check()
        proc = subprocess.Popen(
            [*_guard_cmd(), "--", *cmd], env=env, start_new_session=True, **popen
        )
        _state.groups[proc.pid] = proc
    try:
        yield proc
    finally:
        try:
            if proc.poll() is None:
                _stop([proc.pid])
                proc.wait()
        finally:
            with _state.lock:
                _state.groups.pop(proc.pid, None)


def child_environ(env: dict[str, str] | None) -> dict[str, str]:
    """A child's variables: ``env`` (or ours), with the audit's temporary folder."""
    env = dict(os.environ if env is None else env)
    if _state.temp is not None:
        env["TMPDIR"] = str(_state.temp)
    return env


@contextlib.contextmanager
def adopted(pgid: int, running: Callable[[], bool]) -> Iterator[None]:
    """A process group started elsewhere (a warm run, ``ctxaudit/warm.py``) as one of
    the audit's children while the block lasts: an interrupt stops it, and one still
    ``running`` when the block ends (it raised) is stopped. Raises :class:`Interrupted`
    (having stopped it) when the audit was interrupted before it was registered."""
    with _state.lock:
        _state.groups[pgid] = None
    try:
        check()
        yield
    finally:
        try:
            if running():
                _stop([pgid])
        finally:
            with _state.lock:
                _state.groups.pop(pgid, None)


def run(
    cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(cmd, capture_output=True, text=True)`` under :func:`spawn`: a
    download or build step (pip, uv, git) in a group of its own, so that it and what it
    started stop with the audit, interrupted or killed. A command that cannot start
    answers exit 127 with the reason, like a shell."""
    with spawn(
        cmd, env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, errors="replace",
    ) as proc:  # fmt: skip
        out, err = proc.communicate()
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def staging(parent: Path, tag: str) -> Path:
    """A new folder ``parent/.tmp-p<pid>-<tag>-*`` to build something in before it is
    renamed into place; the folders a killed process left there (its pid no longer
    running) are removed first."""
    for stale in parent.glob(".tmp-p*-*"):
        pid = stale.name[len(".tmp-p") :].partition("-")[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            shutil.rmtree(stale, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f".tmp-p{os.getpid()}-{tag}-", dir=parent))


@contextlib.contextmanager
def staged(parent: Path, tag: str) -> Iterator[Path]:
    """:func:`staging` for the block, removed after it (what the block renamed into place
    stays)."""
    folder = staging(parent, tag)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _stop(pgids: list[int]) -> None:
    """SIGINT to each group now, SIGKILL to what is left of it after :data:`GRACE`."""
    for pgid in pgids:
        _signal_group(pgid, signal.SIGINT)

    def finish() -> None:
        for pgid in pgids:
            _signal_group(pgid, signal.SIGKILL)

    timer = threading.Timer(GRACE, finish)
    timer.daemon = True
    timer.start()


def terminate_all() -> list[int]:
    """Stop every live child group; the groups it signalled."""
    with _state.lock:
        pgids = list(_state.groups)
    _stop(pgids)
    return pgids


def interrupt(signum: int | None = None) -> bool:
    """Mark the audit interrupted and stop its children; True the first time."""
    with _state.lock:
        first = not _state.interrupted.is_set()
        _state.signal = signum if first else _state.signal
        _state.interrupted.set()
    terminate_all()
    return first


def _on_signal(signum: int, frame: FrameType | None) -> None:
    if interrupt(signum):
        raise KeyboardInterrupt(f"signal {signum}")
    # a second signal while the audit winds down: the children are stopped again, and
    # the wind-down (the matrix of what finished, the temporary folder) goes on


@contextlib.contextmanager
def on_signals() -> Iterator[None]:
    """SIGINT and SIGTERM: mark the audit interrupted, stop the children, raise
    ``KeyboardInterrupt`` in the main thread (once). Restores the handlers after."""
    old = {s: signal.signal(s, _on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@contextlib.contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """While it lasts, SIGTERM interrupts as Ctrl-C does (``KeyboardInterrupt``), so a
    command cleans up and exits 130, not 143; only in the main thread, where handlers
    run (elsewhere it changes nothing)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    old = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale(base: Path | None = None) -> list[Path]:
    """Remove the temporary folders of audits that are no longer running (SIGKILLed)."""
    base = Path(base or tempfile.gettempdir())
    removed = []
    for d in base.glob(f"{_ROOT_PREFIX}*-*"):
        pid = d.name[len(_ROOT_PREFIX) :].partition("-")[0]
        if d.is_dir() and pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(d, ignore_errors=True)
            removed.append(d)
    return removed


@contextlib.contextmanager
def temp_root() -> Iterator[Path]:
    """One temporary folder for the audit and its children, removed at the end."""
    sweep_stale()
    root = Path(tempfile.mkdtemp(prefix=f"{_ROOT_PREFIX}{os.getpid()}-"))
    old = tempfile.tempdir
    tempfile.tempdir = str(root)
    _state.temp = root
    try:
        yield root
    finally:
        _state.temp = None
        tempfile.tempdir = old
        shutil.rmtree(root, ignore_errors=True)


def pause(point: str) -> None:
    """Fault injection: at ``point`` named by ``CTXAUDIT_PAUSE_AT``, write the marker
    file and wait until the audit is interrupted (then raise :class:`Interrupted`)."""
    if os.environ.get("CTXAUDIT_PAUSE_AT") != point:
        return
    marker = os.environ.get("CTXAUDIT_PAUSE_MARKER")
    if marker:
        Path(marker).write_text(f"{point} {os.getpid()}\n")
    _state.interrupted.wait(PAUSE_S)
    check()


def wait_threads(prefix: str, timeout: float) -> list[threading.Thread]:
    """Wait up to ``timeout`` s for the threads named ``prefix...``; those still alive."""
    import time

    end = time.monotonic() + timeout
    alive = [t for t in threading.enumerate() if t.name.startswith(prefix)]
    for t in alive:
        t.join(max(0.0, end - time.monotonic()))
    return [t for t in alive if t.is_alive()]


# --------------------------------------------------------------------------- the guard


def _set_pdeathsig(sig: int) -> None:
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0)


def _guard(parent: int, cmd: list[str]) -> int:
    """Run ``cmd`` in this process group; kill the group when the audit dies."""

    def kill_group(signum: int, frame: FrameType | None) -> None:
        os.killpg(0, signal.SIGKILL)

    signal.signal(signal.SIGTERM, kill_group)
    # the group's SIGINT is for the command; a handler (not SIG_IGN) so that the
    # command starts with the default one
    signal.signal(signal.SIGINT, lambda signum, frame: None)
    _set_pdeathsig(signal.SIGTERM)
    if os.getppid() != parent:  # the audit died before the request took effect
        os.killpg(0, signal.SIGKILL)
    try:
        child = subprocess.Popen(cmd)
    except OSError as exc:  # like a shell: the reason, and 127
        print(f"error: cannot run {cmd[0]}: {exc}", file=sys.stderr)
        return 127
    code = child.wait()
    # what the command left running in the group goes with it
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    os.killpg(0, signal.SIGTERM)
    if code < 0:  # the command died of a signal: so does the guard, for the caller
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    if len(sys.argv) > 4 and sys.argv[1] == "--guard" and sys.argv[3] == "--":
        raise SystemExit(_guard(int(sys.argv[2]), sys.argv[4:]))
    print("usage: procs.py --guard PARENT_PID -- CMD...", file=sys.stderr)
    raise SystemExit(2)
