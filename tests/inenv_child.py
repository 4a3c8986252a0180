"""Run a target's in-environment suite as a child in a release's own environment, as
the audit runs it (the target's ``suite_process``)."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from ctxaudit.paths import REPO_ROOT
from ctxaudit.targets import get


def child(
    target_name: str, spec: str, args: list[str], **extra: str
) -> subprocess.CompletedProcess[str]:
    """pytest on ``args`` (stopping at the first failure) in ``spec``'s environment."""
    target = get(target_name)
    described = target.expand(spec)[0]
    process = target.suite_process(described, Path(tempfile.gettempdir()))
    assert process is not None, f"{target_name} runs its suites in ctxaudit's interpreter"
    python, env = process
    env.update(extra)
    cmd = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", *args]
    return subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=False)


def search(named: str | None) -> dict[str, str]:
    """The profile of a target's lockstep as ctxaudit's own suite runs it.

    On the audited releases (no ``--<target>=SPEC``: what CI runs) ``smoke``, a sixth of
    the gate's examples: there the lockstep is asked to drive each release's API and
    hold; each release's search is its release audit's, whose committed report
    (``reports/``) the installed-package tests compare verdicts with. A release or tree
    the developer names gets the session's profile (``ci`` unless set), as does a run
    with ``CTXAUDIT_PROFILE`` set by its caller."""
    if named or "CTXAUDIT_PROFILE" in os.environ:
        return {}
    return {"CTXAUDIT_PROFILE": "smoke"}
