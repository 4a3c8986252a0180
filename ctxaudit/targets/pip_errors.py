"""What pip said when it could not fetch a release, in one short line.

pip's "Could not find a version that satisfies the requirement X==V (from versions:
...)" lists every published release: for langchain a line of 4.7 KB. The line keeps
pip's words and the count of releases, and names only the newest few.
"""

from __future__ import annotations

import re

#: the newest releases named of pip's list
NEWEST = 5

_VERSIONS = re.compile(r"\(from versions: ([^)]*)\)")


def pip_reason(stderr: str) -> str:
    """The first ``ERROR`` line pip wrote (else its last line), its release list cut."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip().startswith("ERROR")]
    reason = (
        lines[0].removeprefix("ERROR: ") if lines else (stderr.strip().splitlines() or ["?"])[-1]
    )
    return _VERSIONS.sub(_shortened, reason)


def _shortened(match: re.Match[str]) -> str:
    versions = [v.strip() for v in match.group(1).split(",") if v.strip()]
    if len(versions) <= NEWEST:
        return match.group(0)
    return f"(from {len(versions)} versions, the newest {', '.join(versions[-NEWEST:])})"
