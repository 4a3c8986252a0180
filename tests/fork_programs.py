"""Run seed-free programs in this interpreter's environment, each in its own forked
process, after importing the library once (what makes each program cost a fork, not an
interpreter start and the library's imports).

    python fork_programs.py --preload mod1,mod2 program.py ...

Each program runs as ``__main__`` in a child forked after the preload; its exit code is
what it passed to ``sys.exit`` (0 when it ends normally, 3 when it raised). Prints one
JSON object: ``{program: {"exit": code, "output": stdout and stderr}}``. Standard
library only: it runs in a release's environment, not ctxaudit's.
"""

from __future__ import annotations

import importlib
import json
import os
import runpy
import sys
import tempfile
import traceback


def run_one(program: str) -> tuple[int, str]:
    with tempfile.TemporaryFile(mode="w+") as out:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: the program, its output into ``out``
            os.dup2(out.fileno(), 1)
            os.dup2(out.fileno(), 2)
            code = 0
            try:
                runpy.run_path(program, run_name="__main__")
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 3)
            except BaseException:  # the program's own error: neither verdict
                traceback.print_exc()
                code = 3
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        out.seek(0)
        return os.waitstatus_to_exitcode(status), out.read()


def main(argv: list[str]) -> int:
    preload: list[str] = []
    if argv[:1] == ["--preload"]:
        preload = [m for m in argv[1].split(",") if m]
        argv = argv[2:]
    for module in preload:
        importlib.import_module(module)
    results = {}
    for program in argv:
        code, output = run_one(program)
        results[program] = {"exit": code, "output": output}
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
