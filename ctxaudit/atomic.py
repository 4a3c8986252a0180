"""Report files appear whole or not at all: each is written to a temporary file in its
own folder and renamed into place (``os.replace`` is atomic on one file system), so a
reader never sees a half-written file and an interrupted writer leaves the old one."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_bytes(path: Path, data: bytes) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def write_text(path: Path, text: str, encoding: str = "utf-8") -> Path:
    return write_bytes(path, text.encode(encoding))
