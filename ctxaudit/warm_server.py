"""The warm interpreter's server: one process per environment imports that environment's
heavy third-party modules once, then forks a child per run (the client is
``ctxaudit/warm.py``).

Run as ``python -P warm_server.py --serve MODULE...`` in the first run's environment:
its variables (the per-run ones left out, but its ``PYTHONPATH``, so that a target's own
package on it can be preloaded) and its working folder.
Standard library only, like ``procs.py``: ``-P`` keeps ctxaudit's own folder off the path.

The server imports the modules it is given (one the environment lacks is skipped),
refuses to serve when a thread is then running (a fork would copy a lock some thread
holds), moves what it loaded out of the garbage collector's reach (``gc.freeze``: a
run's collections would otherwise touch, and so copy, every page of it), and answers
requests on its standard input, one JSON line each::

    {"id": 1, "module": "pytest", "args": [...], "env": {...}, "cwd": "...", "out": "..."}

(or ``"path": "/.../program.py"`` in place of ``"module"``: a script, run as
``python program.py`` would run it, but with its absolute path as ``argv[0]``)

with ``{"id": 1, "pid": N}`` once the child is forked and ``{"id": 1, "exit": CODE}``
when it ends (a negative code: the signal that ended it). Each child leads a process
group of its own, so the caller can stop it and what it started, as ``procs`` stops a
cold run's group. When the server's standard input closes (the caller ended, however it
ended) it kills every child's group and exits; a child whose server dies is killed.

A child takes the run's variables, working folder, ``sys.path`` (its folder, or a
script's own folder, then the run's ``PYTHONPATH``, then the server's own path),
``argv`` and output file, runs the module as ``python -m`` would (a script as
``python program.py`` would), and exits as the interpreter does (``atexit``, threads
joined).
Before that, guards; each makes it exit :data:`NOT_WARM` at once, having run nothing,
and the caller runs the run cold:

- a variable other than the per-run ones (:data:`PER_RUN`, ``CTXAUDIT_*``) differs from
  the server's: a preloaded module may have read it at import;
- a module the server loaded would be imported from another folder in the run (a tree's
  own copy put first on its ``PYTHONPATH``, a Hypothesis of its own, a file of the run's
  working folder, a folder of the server's ``PYTHONPATH`` the run lacks): the run must
  import its own copy.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import runpy
import select
import signal
import sys
import threading
from typing import Any

#: a child's exit when the run cannot be served warm (the caller runs it cold)
NOT_WARM = 197
#: variables a run may set differently from the server's: read at run time (by
#: ctxaudit, pytest, the run's own code), never by a module the server preloads
PER_RUN = ("PYTHONPATH", "TMPDIR", "PYTEST_ADDOPTS", "PYTEST_CURRENT_TEST", "HYPOTHESIS_PROFILE")
PER_RUN_PREFIXES = ("CTXAUDIT_",)
_PR_SET_PDEATHSIG = 1


def per_run(name: str) -> bool:
    return name in PER_RUN or name.startswith(PER_RUN_PREFIXES)


def _differs(server: dict[str, str], run: dict[str, str]) -> list[str]:
    """The variables, the per-run ones aside, whose value differs."""
    names = set(server) | set(run)
    return sorted(n for n in names if server.get(n) != run.get(n) and not per_run(n))


def _origins() -> dict[str, str]:
    """Each loaded top-level module found on the path: the path folder it came from
    (builtin and frozen modules, which no path can shadow, are left out)."""
    found = {}
    for name, module in list(sys.modules.items()):
        spec = getattr(module, "__spec__", None)
        if "." in name or spec is None:
            continue
        if spec.submodule_search_locations:  # a package: the folder holding its folder
            found[name] = os.path.dirname(os.path.abspath(list(spec.submodule_search_locations)[0]))
        elif spec.has_location and spec.origin:
            found[name] = os.path.dirname(os.path.abspath(spec.origin))
    return found


def _names(folder: str) -> set[str]:
    """The top-level names importable from a path folder (a module, a package, an
    extension); none for what is not a folder (a zip, a missing one)."""
    try:
        return {entry.partition(".")[0] for entry in os.listdir(folder)}
    except OSError:
        return set()


def _shadowed(origins: dict[str, str], path: list[str]) -> list[str]:
    """Loaded modules that the run's path would find in another folder than the one the
    server loaded them from (first folder holding the name; a namespace folder counts,
    so an uncertain case is refused, never served)."""
    listed = [(os.path.abspath(folder), _names(folder)) for folder in path]
    found = []
    for name, origin in origins.items():
        first = next((folder for folder, names in listed if name in names), None)
        if first != origin:
            found.append(f"{name} ({first or 'not on the run path'}, loaded from {origin})")
    return sorted(found)


def _die_with_parent() -> None:
    """SIGKILL when the server dies (Linux ``prctl(PR_SET_PDEATHSIG)``); the server is
    single-threaded, so its death, not a thread's, is what ends the child."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _child(req: dict[str, Any], server_env: dict[str, str], site: list[str],
           origins: dict[str, str]) -> int:  # fmt: skip
    """In the forked child: the run's exit code, or :data:`NOT_WARM` (nothing ran)."""
    try:
        _die_with_parent()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        nothing = os.open(os.devnull, os.O_RDONLY)  # stdin is the server's request pipe
        os.dup2(nothing, 0)
        os.close(nothing)
        out = os.open(req["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.close(out)
        env: dict[str, str] = req["env"]
        script = req.get("path")
        # the first folder on the path: a script's own, as the interpreter puts it (its
        # siblings import as top-level modules), else the working folder, as -m does
        first = os.path.dirname(os.path.abspath(script)) if script else req["cwd"]
        path = [first, *filter(None, env.get("PYTHONPATH", "").split(os.pathsep)), *site]
        why = _differs(server_env, env) or _shadowed(origins, path)
        if why:
            print(f"ctxaudit.warm: not served warm: {', '.join(why)}", file=sys.stderr)
            sys.stderr.flush()
            os._exit(NOT_WARM)
        os.environ.clear()
        os.environ.update(env)
        os.chdir(req["cwd"])
        import tempfile

        tempfile.tempdir = None  # TMPDIR is the run's
        sys.path[:] = path
        importlib.invalidate_caches()
        sys.argv = [script or req["module"], *req["args"]]
    except BaseException:  # noqa: BLE001 - said on the run's output; nothing ran yet
        import traceback

        traceback.print_exc()
        sys.stderr.flush()
        os._exit(NOT_WARM)
    try:
        if script:
            runpy.run_path(script, run_name="__main__")
        else:
            runpy.run_module(req["module"], run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)  # as the interpreter says a SystemExit("why")
        return 1
    except KeyboardInterrupt:  # as the interpreter ends on one: by SIGINT
        import traceback

        traceback.print_exc()
        sys.stderr.flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    return 0


def serve(modules: list[str]) -> int:
    """The server's loop (see the module's docstring); in a child, the run's exit."""
    for name in modules:  # a module the environment lacks is just not preloaded
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001, S112 - preloading is an optimisation
            continue
    if threading.active_count() > 1:
        refused = f"{threading.active_count()} threads running after the imports"
        print(json.dumps({"refused": refused}), flush=True)
        return 0
    gc.collect()
    gc.freeze()
    origins = _origins()  # the server's own modules too
    own = {os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p}
    site = [p for p in sys.path if os.path.abspath(p) not in own]  # the environment's own
    server_env = dict(os.environ)
    print(json.dumps({"ready": sorted(origins)}), flush=True)
    children: dict[int, int] = {}  # pid (and group) -> request id
    stdin = sys.stdin.buffer.fileno()
    pending = b""
    while True:
        ready, _, _ = select.select([stdin], [], [], 0.05)
        while children:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            ident = children.pop(pid)
            print(json.dumps({"id": ident, "exit": os.waitstatus_to_exitcode(status)}), flush=True)
        if not ready:
            continue
        chunk = os.read(stdin, 65536)
        if not chunk:  # the caller ended: so do its runs
            for pid in children:
                with contextlib.suppress(OSError):
                    os.killpg(pid, signal.SIGKILL)
            return 0
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            req = json.loads(line)
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:
                with contextlib.suppress(OSError):
                    os.setpgid(0, 0)
                return _child(req, server_env, site, origins)
            with contextlib.suppress(OSError):  # both sides set it: no race with a kill
                os.setpgid(pid, pid)
            children[pid] = req["id"]
            print(json.dumps({"id": req["id"], "pid": pid}), flush=True)


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--serve":
        raise SystemExit(serve(sys.argv[2:]))
    print("usage: warm_server.py --serve MODULE...", file=sys.stderr)
    raise SystemExit(2)
