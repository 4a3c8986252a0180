"""Warm runs: a ``python -m MODULE ...`` command forked from a server that has already
imported the environment's heavy modules (``ctxaudit/warm_server.py``), instead of a
fresh interpreter that imports them again.

Why: most of a suite process's time is start-up, not the search
(``reports/timing/ci-fresh-clone.md``). A lightspeed-stack child spends about 3 s
importing OGX, openai, SQLAlchemy, FastAPI, ... before its first example, and the audit
and the tests start many; a library target's child about 1 s; an attribution replay
about 1 s.

:func:`run` is the one entry. It runs the command in the server of its interpreter, its
working folder and its variables (the per-run ones aside: ``PYTHONPATH``, ``TMPDIR``,
``CTXAUDIT_*``, ...), started on first use and kept for the process's life (at most
:data:`MAX_SERVERS`, the least recently used closed first). It answers ``None`` when the
run was not served warm and nothing of it ran, so the caller runs it cold:

- ``CTXAUDIT_WARM=0`` (in the caller's environment or the run's) turns warm runs off;
- the server refused (a thread running after its imports) or could not start;
- the run's guard refused: a variable that differs from the server's, a preloaded
  module the run's ``PYTHONPATH`` also holds (the server's docstring).

A warm run is a child of the audit as a cold one is (``ctxaudit/procs.py``): it leads a
process group of its own, registered while it runs, so an interrupt stops it and what it
started; it is not started once the audit is interrupted; the audit's temporary folder is
its ``TMPDIR``; when the audit dies its server sees its input close and kills its runs.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ctxaudit import procs, warm_server

SERVER = Path(warm_server.__file__).resolve()
#: servers kept per process: each holds an environment's preloaded modules in memory
MAX_SERVERS = 3
#: how long a server's imports may take before it counts as not starting
START_S = 120.0


def enabled(env: dict[str, str]) -> bool:
    return "0" not in (env.get("CTXAUDIT_WARM"), os.environ.get("CTXAUDIT_WARM"))


class WarmRun:
    """One forked run: its pid (which leads its process group) and its exit."""

    def __init__(self, ident: int) -> None:
        self.ident = ident
        self.answers: queue.Queue[dict[str, Any]] = queue.Queue()
        self.pid = 0
        self.code: int | None = None
        self.done = False

    def wait(self, timeout: float | None) -> bool:
        """Whether it ended within ``timeout`` s (:attr:`code` then holds its exit;
        None when it was not served warm, or its server died under it)."""
        if self.done:
            return True
        try:
            answer = self.answers.get(timeout=timeout)
        except queue.Empty:
            return False
        self.done = True
        code = answer.get("exit")
        self.code = None if code is None or code == warm_server.NOT_WARM else int(code)
        return True


class Server:
    """One server process and the runs it has in flight."""

    def __init__(self, python: str, modules: Sequence[str], env: dict[str, str],
                 cwd: str) -> None:  # fmt: skip
        self.proc = subprocess.Popen(
            [python, "-P", str(SERVER), "--serve", *modules],
            env=_server_env(env),
            cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, start_new_session=True,
        )  # fmt: skip
        self.cwd = cwd
        self.served = 0  # runs forked
        self.lock = threading.Lock()
        self.next_id = 0
        self.runs: dict[int, WarmRun] = {}
        self.refused: str | None = None
        hello = _first_line(self.proc, START_S)
        if hello is None or "ready" not in hello:
            self.refused = (hello or {}).get("refused", "the server did not start")
            self.close()
            return
        threading.Thread(target=self._read, daemon=True, name="ctxaudit-warm").start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        with contextlib.suppress(ValueError, OSError):  # closed under us: the server ended
            for line in self.proc.stdout:
                answer = json.loads(line)
                with self.lock:
                    run = self.runs.get(answer["id"])
                    if run is not None and "exit" in answer:
                        del self.runs[answer["id"]]
                if run is not None:
                    run.answers.put(answer)
        with self.lock:  # the server ended: no run still in flight has an exit
            ended, self.runs = list(self.runs.values()), {}
        for run in ended:
            run.answers.put({"exit": None})

    def alive(self) -> bool:
        return self.refused is None and self.proc.poll() is None

    def start(self, what: dict[str, str], args: Sequence[str], env: dict[str, str], out: Path
              ) -> WarmRun | None:  # fmt: skip
        """Fork the run (``what``: ``{"module": name}`` or ``{"path": script}``); None
        when the server is gone (run it cold)."""
        with self.lock:
            self.next_id += 1
            run = WarmRun(self.next_id)
            self.runs[run.ident] = run
            request = {"id": run.ident, **what, "args": list(args), "env": env,
                       "cwd": self.cwd, "out": str(out)}  # fmt: skip
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write(json.dumps(request) + "\n")
                self.proc.stdin.flush()
            except (OSError, ValueError):
                del self.runs[run.ident]
                return None
        answer = run.answers.get()  # its pid, or its end if the server died first
        if "pid" not in answer:
            return None
        run.pid = answer["pid"]
        self.served += 1
        return run

    def busy(self) -> bool:
        with self.lock:
            return bool(self.runs)

    def close(self) -> None:
        """End the server (and so every run it still has)."""
        with contextlib.suppress(OSError, ValueError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _server_env(env: dict[str, str]) -> dict[str, str]:
    """The server's variables: the first run's, less the per-run ones (a module it
    preloads must not see one run's), but with its ``PYTHONPATH`` (a target's own package
    there is preloaded; a run that would import another copy is refused) and its
    ``TMPDIR``: the audit's temporary folder, under which every process the audit started
    can be found (and none outlive it)."""
    kept = {k: v for k, v in env.items() if not warm_server.per_run(k)}
    for name in ("PYTHONPATH", "TMPDIR"):
        if name in env:
            kept[name] = env[name]
    return kept


def _first_line(proc: subprocess.Popen[str], timeout: float) -> dict[str, Any] | None:
    """The server's first answer (ready, or why it refused); None if it said nothing."""
    import select

    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    line = proc.stdout.readline() if ready else ""
    try:
        answer = json.loads(line) if line else None
    except json.JSONDecodeError:
        return None
    return answer if isinstance(answer, dict) else None


_Key = tuple[str, str, tuple[str, ...], tuple[tuple[str, str], ...]]
_servers: collections.OrderedDict[_Key, Server] = collections.OrderedDict()
_servers_lock = threading.Lock()


def server_for(python: str, modules: Sequence[str], env: dict[str, str], cwd: str
               ) -> Server | None:  # fmt: skip
    """The server of this interpreter, preload, folder and variables (the per-run ones
    aside), started on first use, started again if it died (an interrupt kills it);
    None when it refused to serve (every run there goes cold)."""
    shared = tuple(sorted((k, v) for k, v in env.items() if not warm_server.per_run(k)))
    key: _Key = (python, cwd, tuple(modules), shared)
    with _servers_lock:
        found = _servers.get(key)
        if found is not None and found.refused is None and not found.alive():
            del _servers[key]
            found = None
        if found is None:
            idle = [k for k, s in _servers.items() if not s.busy()]
            while len(_servers) >= MAX_SERVERS and idle:
                _servers.pop(idle.pop(0)).close()
            found = _servers[key] = Server(python, modules, env, cwd)
            if len(_servers) == 1:
                import atexit

                atexit.register(close_all)
        _servers.move_to_end(key)
    return None if found.refused else found


def close_all() -> None:
    """End every server (at exit; a test that wants fresh ones)."""
    with _servers_lock:
        ending = list(_servers.values())
        _servers.clear()
    for one in ending:
        with contextlib.suppress(Exception):  # at exit: a server ends with us anyway
            one.close()


def run(
    cmd: Sequence[str],
    env: dict[str, str],
    cwd: Path,
    out: Path,
    preload: Sequence[str],
    timeout: float | None = None,
    tick: Callable[[], None] | None = None,
) -> int | None:
    """``cmd`` (``[python, "-m", module, *args]``, or ``[python, "program.py", *args]``)
    run warm in ``cwd`` under ``env``,
    its output (stdout and stderr) written to ``out``: its exit code, or None when it
    was not served warm and nothing of it ran (run it cold). ``tick`` is called every
    second while it runs. Past ``timeout`` s its group is killed and
    ``subprocess.TimeoutExpired`` raised with its output so far."""
    if len(cmd) >= 3 and cmd[1] == "-m":
        what, args = {"module": cmd[2]}, cmd[3:]
    elif len(cmd) >= 2 and cmd[1].endswith(".py") and not cmd[1].startswith("-"):
        what, args = {"path": os.path.abspath(os.path.join(cwd, cmd[1]))}, cmd[2:]
    else:
        return None
    if not enabled(env):
        return None
    env = procs.child_environ(env)
    server = server_for(cmd[0], preload, env, str(cwd))
    if server is None:
        return None
    procs.check()
    started = server.start(what, args, env, out)
    if started is None:
        return None
    end = None if timeout is None else time.monotonic() + timeout
    with procs.adopted(started.pid, lambda: not started.wait(0)):
        while not started.wait(1.0 if end is None else min(1.0, max(0.0, end - time.monotonic()))):
            if tick is not None:
                tick()
            if end is not None and time.monotonic() >= end:
                with contextlib.suppress(OSError):
                    os.killpg(started.pid, signal.SIGKILL)
                started.wait(60)
                output = out.read_text(encoding="utf-8", errors="replace") if out.exists() else ""
                raise subprocess.TimeoutExpired(list(cmd), timeout or 0, output=output)
    return started.code
