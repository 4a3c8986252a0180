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


def write_texts(files: dict[Path, str], encoding: str = "utf-8") -> None:
    """Write several files (one report's ``findings.json`` and ``findings.md``) so that
    they are replaced together or not at all: each is written beside its place first,
    then each put in place, the file it replaces kept under a second name until all
    are. One that cannot be written or put in place (a full disk, a file made
    immutable, a folder in its place) puts back those already replaced and raises its
    ``OSError``; nothing new stays behind."""
    staged: list[tuple[Path, str]] = []
    done: list[tuple[Path, str | None]] = []  # replaced: (place, what it held, kept)
    try:
        for path, text in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            staged.append((path, tmp))
            with os.fdopen(fd, "wb") as fh:
                fh.write(text.encode(encoding))
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, 0o644)
        for path, tmp in staged:
            old = None
            try:
                if path.is_file():
                    old = f"{tmp}.old"
                    os.link(path, old)
                os.replace(tmp, path)
            except OSError as exc:  # said of the place, not of our names beside it
                if old is not None:
                    with contextlib.suppress(OSError):
                        os.unlink(old)
                raise OSError(exc.errno, exc.strerror, str(path)) from exc
            done.append((path, old))
    except BaseException:
        for path, old in reversed(done):
            with contextlib.suppress(OSError):
                if old is None:
                    os.unlink(path)
                else:
                    os.replace(old, path)
        for _, tmp in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise
    for _, old in done:
        if old is not None:
            with contextlib.suppress(OSError):
                os.unlink(old)
