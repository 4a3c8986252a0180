"""A run's work folders under ``mutation/work`` (``<name>.<pid>``): kept on purpose with a
reason (an error's evidence, or ``CTXAUDIT_KEEP_WORK``), or removed once the run that
made them is gone (a run killed before it could remove its own).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from mutation import engine

#: the file that marks a work folder kept on purpose (an error's evidence, or
#: CTXAUDIT_KEEP_WORK): :func:`sweep_stale_work` leaves it
KEPT = "KEPT"


def keep(folders: list[Path], why: str) -> None:
    for folder in folders:
        if folder.is_dir():
            (folder / KEPT).write_text(why + "\n")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's: running
        return True
    return True


def sweep_stale_work() -> list[Path]:
    """Remove the work folders (``<name>.<pid>``) of runs that are no longer running and
    did not keep them on purpose (a run killed before it could remove its own); the
    folders removed."""
    removed: list[Path] = []
    if not engine.WORK.is_dir():
        return removed
    for folder in sorted(engine.WORK.iterdir()):
        pid = folder.suffix[1:]
        if not (folder.is_dir() and pid.isdigit()) or (folder / KEPT).exists():
            continue
        if int(pid) != os.getpid() and not _pid_alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed
