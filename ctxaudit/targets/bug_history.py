"""A target's own bug history as seed-free programs: the record each target keeps in
``ctxaudit/targets/<target>/history/`` (``docs/notes/bug-history-<target>.md``).

Each :class:`Bug` is one upstream report of the domain (context, compaction,
summarization, sessions, stored turns, usage limits) that a plain program of the
library shows: exit 1 when the bug shows, 0 when it does not, anything else the
program's own error (never a verdict). A fixed bug's program fails on the last release
before its fix and holds after it; an unfixed one's fails on the current release.
``tests/history_programs.py`` runs them, one process per release.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Bug:
    upstream: str  # the report, "owner/repo#number"
    title: str
    fix: str  # the fixing PR and first release with it, or "unfixed ..."
    program: Path
    fails_on: tuple[str, ...]  # releases the program must reproduce it on
    holds_on: tuple[str, ...]  # and must not
    before: str  # the last release before the fix ("" for an unfixed bug)
    finding: str = ""  # the registered finding it is, if any
    before_unchecked: str = ""  # why the release before the fix is not run, if it is not
