"""``ctxaudit audit --since REV``: the functions in each target's mutation scope that
changed since REV, for a pull-request gate that mutates only those.

The mutation runner works them out (:mod:`mutation.since`, asked as a process: ctxaudit
never imports the mutation runner); this module holds what the audit keeps of them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ctxaudit.suite import REPO


class SinceError(Exception):
    """REV or the tree cannot be used. One line."""


@dataclass(frozen=True)
class Changed:
    rev: str
    #: (file relative to the target root, qualified function name), sorted
    functions: tuple[tuple[str, str], ...]
    #: files of the package that changed at all
    files: tuple[str, ...]

    def only_globs(self) -> list[str]:
        """The mutation runner's ``--only`` globs that select the changed functions'
        mutants (their catalogued ones included)."""
        return [f"{path}:{qual}:*" for path, qual in self.functions]


def selection(described: Sequence[Any], rev: str) -> dict[str, Changed]:
    """label -> the changed functions of each target version (a
    :class:`~ctxaudit.targets.base.Described`), for ``--since REV``.
    Raises SinceError (one line) for a version without a git history or a bad REV."""
    out: dict[str, Changed] = {}
    for t in described:
        cmd = [sys.executable, "-m", "mutation.since", "--target", t.kind, "--rev", rev]
        cmd += ["--spec", t.spec]
        if t.repo is not None:
            cmd += ["--repo", str(t.repo)]
        # from ctxaudit's root (the checkout, or an installed copy's): the mutation runner
        # is found there, wherever the audit was run from
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=REPO)
        if proc.returncode == 2:
            raise SinceError((proc.stderr.strip().splitlines() or ["--since failed"])[-1])
        if proc.returncode != 0:
            raise RuntimeError(f"python -m mutation.since exited {proc.returncode}: "
                               f"{proc.stderr.strip()[-500:]}")  # fmt: skip
        data = json.loads(proc.stdout)
        functions = tuple((str(p), str(q)) for p, q in data["functions"])
        out[t.label] = Changed(rev, functions, tuple(data["files"]))
    return out
