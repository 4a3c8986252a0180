"""Run the in-environment suite (``tests/lightspeed/inenv``) against one tree.

ctxaudit runs on Python 3.11; a lightspeed-stack tree needs 3.12 and its own
locked dependencies. This module, on ctxaudit's side, resolves the tree,
builds (or reuses) its environment, and runs pytest there as a child process
with the tree's ``src`` and ctxaudit on its path, the same Hypothesis profile
and seed, and ``CTXAUDIT_LIGHTSPEED_*`` naming the tree. The child's output is
kept whole; :func:`summary` picks out what a reader needs.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ctxaudit import warm
from ctxaudit.outcomes import CouldNotCheck
from ctxaudit.paths import REPO_ROOT
from ctxaudit.targets.lightspeed import env as lsenv
from ctxaudit.targets.lightspeed.tree import LightspeedTree

INENV = "tests/lightspeed/inenv"


@dataclass(frozen=True)
class ChildRun:
    tree: LightspeedTree
    env: lsenv.LightspeedEnv
    returncode: int
    output: str
    seconds: float

    @property
    def passed(self) -> bool:
        return self.returncode == 0


def child_env(
    env: lsenv.LightspeedEnv, tree: LightspeedTree, extra: dict[str, str] | None = None
) -> dict[str, str]:
    environ = lsenv.child_environ(env, tree)
    environ.update(
        CTXAUDIT_LIGHTSPEED_TREE=str(tree.root),
        CTXAUDIT_LIGHTSPEED_LABEL=tree.label,
        CTXAUDIT_LIGHTSPEED_TAG=tree.tag or "",
        CTXAUDIT_LIGHTSPEED_COMMIT=tree.commit or "",
        OTEL_ANONYMIZATION_SECRET="ctxaudit",
    )
    environ.update(extra or {})
    return environ


def run_suite(
    tree: LightspeedTree,
    pytest_args: Sequence[str] = (),
    *,
    profile: str | None = None,
    seed: str | None = None,
    extra_env: dict[str, str] | None = None,
    log: Callable[[str], None] = lambda _: None,
    timeout: float = 1800,
) -> ChildRun:
    """pytest on ``tests/lightspeed/inenv`` (or ``pytest_args``) in the tree's environment.

    ``timeout`` only turns a hang into an answer: it is far above any run's duration
    (the whole inenv suite takes minutes on a loaded machine), and a child that
    outlives it raises :class:`CouldNotCheck` with what it printed, never a verdict
    about the tree.
    """
    env = lsenv.ensure_env(tree, log=log)
    extra = dict(extra_env or {})
    if profile:
        extra["CTXAUDIT_PROFILE"] = profile
    args = [
        str(env.python), "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:warnings",
        "--show-capture=no", "-q", "-rfEs",
    ]  # fmt: skip
    if seed is not None:
        args.append(f"--hypothesis-seed={seed}")
    args += list(pytest_args) or [INENV]
    started = time.monotonic()
    # its own temporary folder: trees write fixed names there (the enriched
    # llama-stack config), which runs side by side must not share
    scratch = tempfile.mkdtemp(prefix="ctxaudit-ls-run-")
    extra["TMPDIR"] = scratch
    extra["CTXAUDIT_LIGHTSPEED_EXIT_AT_ONCE"] = "1"  # tests/lightspeed/inenv/conftest.py
    environ = child_env(env, tree, extra)
    try:
        warm_out = Path(scratch) / "warm-output"
        code = warm.run(args, environ, REPO_ROOT, warm_out, PRELOAD, timeout=timeout)
        if code is not None:
            output = warm_out.read_text(encoding="utf-8", errors="replace")
        else:
            proc = subprocess.run(
                args,
                cwd=REPO_ROOT,
                env=environ,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
            code, output = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        tail = "\n".join(out.splitlines()[-20:])
        raise CouldNotCheck(
            f"{tree.label}: the in-environment suite did not end within {timeout:.0f} s "
            f"(killed); its last lines:\n{tail}"
        ) from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return ChildRun(tree, env, code, output, time.monotonic() - started)


#: the third-party modules every lightspeed-stack child imports before its first example
#: (3.2 s of its 8-10 s, reports/timing/ci-fresh-clone.md), preloaded once per
#: environment by the warm interpreter (``ctxaudit/warm.py``); one a tree's environment
#: lacks is skipped (OGX trees and llama-stack trees name their packages differently)
PRELOAD = [
    "pytest", "hypothesis", "httpx", "openai", "sqlalchemy", "fastapi", "pydantic_ai",
    "authlib.jose", "mcp", "kubernetes", "a2a.server.apps", "ogx_api", "ogx_client",
    "ogx.core.stack", "ogx.core.library_client", "llama_stack_client",
    "llama_stack.core.stack", "llama_stack.core.library_client",
]  # fmt: skip


_FAILURE_START = re.compile(r"^_{3,} .* _{3,}$")


def summary(output: str, limit: int = 90) -> str:
    """Each failure's report and the short summary, at most ``limit`` lines.

    A failure's report is its section of pytest's output, from its ``___ name
    ___`` header to the next section; where pytest's own format was used, only
    its ``E`` lines (the message) are kept, not the traceback.
    """
    lines = output.splitlines()
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in lines:
        if _FAILURE_START.match(line):
            current = [line]
            blocks.append(current)
        elif current is not None:
            if line.startswith(("====", "----")):
                current = None
            else:
                current.append(line)
    keep: list[str] = []
    for block in blocks:
        errors = [line for line in block if line.startswith("E ")]
        keep += [block[0], *errors] if errors else block
    tail = [ln for ln in lines if re.match(r"^(FAILED|ERROR|SKIPPED|\d+ (passed|failed))", ln)]
    text = keep[: max(limit - len(tail), 0)] + tail
    return "\n".join(text) if text else "\n".join(lines[-limit:])
