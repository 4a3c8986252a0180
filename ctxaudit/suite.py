"""Which ctxaudit produced a report: the commit of this checkout (``-dirty`` when files
other than reports/ differ from it), so a committed report names the suite it came from;
an installed build names its version."""

from __future__ import annotations

import functools
import subprocess
from importlib.metadata import PackageNotFoundError, version

from ctxaudit.paths import IN_CHECKOUT, REPO_ROOT

REPO = REPO_ROOT


@functools.cache
def commit() -> str:
    if not IN_CHECKOUT:
        return f"{installed_version()} (installed)"
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            cwd=REPO, capture_output=True, text=True, check=True, timeout=10,
        ).stdout.strip()  # fmt: skip
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!reports"],
            cwd=REPO, capture_output=True, text=True, check=True, timeout=10,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return "unknown (not a git checkout)"
    return head + ("-dirty" if changed else "")


def installed_version() -> str:
    """ctxaudit's version as installed (the project's, for a checkout)."""
    try:
        return version("ctxaudit")
    except PackageNotFoundError:
        return "unknown"
