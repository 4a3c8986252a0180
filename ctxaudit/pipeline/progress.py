"""What the audit says while it runs: the running jobs' status line, a line per
version as it finishes, and each version's line at the end."""

from __future__ import annotations

import shutil
import sys
import threading
import time
from typing import TYPE_CHECKING

from ctxaudit.outcomes import COULD_NOT_CHECK, FAILS

if TYPE_CHECKING:
    from ctxaudit.target_report import TargetReport


class Progress:
    """The running jobs on one status line, rewritten in place on a terminal; a
    heartbeat line every 30 s otherwise (logs, CI)."""

    def __init__(self, tty: bool) -> None:
        self.tty = tty
        self.last = 0.0
        self.running: dict[str, str] = {}
        self.lock = threading.Lock()

    def status(self, label: str, text: str) -> None:
        with self.lock:
            self.running[label] = text
            line = " | ".join(f"{k}: {v}" for k, v in self.running.items())
            if self.tty:
                print(f"\r\033[K{line[: shutil.get_terminal_size().columns - 1]}", end="")
                sys.stdout.flush()
            elif time.monotonic() - self.last > 30:
                self.last = time.monotonic()
                print(line, flush=True)

    def done(self, label: str) -> None:
        with self.lock:
            self.running.pop(label, None)

    def line(self, text: str) -> None:
        with self.lock:
            print(f"\r\033[K{text}" if self.tty else text, flush=True)


def status(report: TargetReport) -> str:
    """A version's line: its properties' outcome, the third one said as itself."""
    if report.outcome == COULD_NOT_CHECK:
        first = report.unchecked[0]["why"] if report.unchecked else "a property's check"
        return f"COULD NOT CHECK: {first}"
    if report.outcome == FAILS:
        return "FAILS " + " ".join(p for p, v in report.verdicts.items() if v == FAILS)
    if not report.ok:  # neither a finding nor unchecked, yet not ok: say what pytest said
        return f"could not tell (pytest exit {report.exit_status})"
    return "properties hold"


def summary(report: TargetReport) -> str:
    """One version in one line, as a release manager reads it: what holds, the known
    findings that reproduce and their fixes (and whether the fully fixed tree holds),
    and what is new."""
    held = [p for p, v in report.verdicts.items() if v == "holds"]
    known = [k for k in report.known if k.get("affects")]
    parts = ["holds " + (" ".join(held) if held else "nothing")]
    if known:
        props = sorted({p for k in known for p in str(k["property"]).split("/")})
        verified = sum(1 for f in report.fixes if f.get("status") == "fix verified")
        line = f"known {len(known)} finding(s) on {' '.join(props)}"
        if report.fixes:
            line += f", {verified} fix(es) verified"
        if report.fixed:
            line += ", the fully fixed tree " + (
                "holds" if report.fixed.get("ok") else "does not hold (see findings.md)"
            )
        parts.append(line)
    unchecked = [p for p, v in report.verdicts.items() if v == "could not check"]
    if unchecked:
        parts.append("could not check " + " ".join(unchecked))
    parts.append(f"new {len(report.findings)}" if report.findings else "new none")
    if report.unpinned:  # verdicts of another Hypothesis or pytest than ctxaudit's
        parts.append("ran with " + ", ".join(report.unpinned))
    return " · ".join(parts)
