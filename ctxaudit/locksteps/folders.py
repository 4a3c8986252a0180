"""The folder each example of a lockstep keeps its storage in (a session file, a
conversation's log): made when the example starts, removed with it."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Protocol


class Closes(Protocol):
    def close(self) -> None: ...


def example_folder(concern: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=f"ctxaudit-{concern}-"))


def end_example(opened: Closes | None, folder: Path | None) -> None:
    """Close what the example opened over its folder, then remove the folder: an audit
    runs hundreds of examples, and none may be left behind in the user's tmp."""
    try:
        if opened is not None:
            opened.close()
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
