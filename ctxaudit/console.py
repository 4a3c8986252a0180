"""The console of a ctxaudit command: what it prints never ends or changes a run.

A command's verdict is its exit code and its reports; the console only tells. So:

- a standard stream that is closed (``>&-``: Python gives None) writes nowhere;
- a console that cannot encode a character (``PYTHONIOENCODING=ascii``, an ASCII
  locale) gets it escaped (``\\xb7``), never an exception after a run that held;
- a reader that goes away (``| head -1``: a broken pipe) silences the console and the
  run goes on to write its reports and exit with its verdict;
- a console that cannot be written (``>/dev/full``) silences it too, and the command
  then says so in one line on standard error and exits 2 (ctxaudit's own trouble: what
  it had to say was lost).

:func:`guarded` runs a command under these rules, and turns any other ``OSError`` the
command did not handle (a report that cannot be written: a full disk, a file made
read-only, a folder where a report goes, a name too long) into one line and exit 2
instead of a traceback and exit 1, which means "a property fails". An interrupt the
command did not handle itself (Ctrl-C, or SIGTERM, which interrupts like it) is one line
and exit 130.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import sys
from collections.abc import Callable
from typing import Any, TextIO

from ctxaudit import procs


class _Guarded(io.TextIOBase):
    """A standard stream that stops writing, instead of raising, once it fails."""

    def __init__(self, stream: TextIO, fd: int) -> None:
        self._stream: TextIO | None = stream
        self._fd = fd
        #: why it stopped (None: it did not, or its reader went away)
        self.failure: OSError | None = None

    def _stop(self, exc: OSError) -> None:
        self._stream = None
        if exc.errno != errno.EPIPE:
            self.failure = exc
        # nothing more reaches the descriptor, not even the interpreter's final flush
        with contextlib.suppress(OSError):  # a descriptor already gone stays gone
            os.dup2(os.open(os.devnull, os.O_WRONLY), self._fd)

    def write(self, text: str) -> int:
        if self._stream is not None:
            try:
                self._stream.write(text)
            except OSError as exc:
                self._stop(exc)
        return len(text)

    def flush(self) -> None:
        if self._stream is not None:
            try:
                self._stream.flush()
            except OSError as exc:
                self._stop(exc)

    def isatty(self) -> bool:
        return self._stream is not None and self._stream.isatty()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._stream, "encoding", None) or "utf-8"

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _prepare(name: str, fd: int) -> _Guarded:
    stream = getattr(sys, name)
    if stream is None:  # closed by the caller (>&-)
        stream = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives as long as sys
    else:
        # not a text stream of the io module (a test's capture): left as it is
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.reconfigure(errors="backslashreplace")
    guarded = _Guarded(stream, fd)
    setattr(sys, name, guarded)
    return guarded


def guarded(command: Callable[[], int]) -> int:
    """Run ``command`` (a ctxaudit command: its exit code) under the console rules."""
    out = _prepare("stdout", 1)
    _prepare("stderr", 2)
    try:
        with procs.sigterm_interrupts():
            code = command()
    except KeyboardInterrupt:  # what the command did not handle itself (the audit does)
        print("ctxaudit: interrupted", file=sys.stderr)
        code = 130
    except OSError as exc:
        # a rename into place names its destination second: that is the report
        target = exc.filename2 or exc.filename
        where = f" {target}" if target else ""
        print(f"ctxaudit: could not write{where}: {exc.strerror or exc}", file=sys.stderr)
        code = 2
    finally:
        sys.stdout.flush()
    if out.failure is not None:
        print(
            f"ctxaudit: could not write to standard output: {out.failure.strerror or out.failure}"
            " (the reports were written)",
            file=sys.stderr,
        )
        return 2
    return code
