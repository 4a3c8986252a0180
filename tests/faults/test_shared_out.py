"""Two audits sharing a report folder at once: each one's reports end whole.

The first to finish removes the shared patches no report refers to (``fix_patches.
prune``); the other, still running, has written the patches its report will link but
not yet that report. Here the other audit is a process of its own that writes a patch
as the fix audit does and waits; the prune of this process must keep its patch while it
runs, and remove it (no report refers to it) once it has ended.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ctxaudit import fix_patches

REPO = Path(__file__).resolve().parents[2]

OTHER = """
import sys
from pathlib import Path
from ctxaudit import fix_patches

out = Path(sys.argv[1])
print(fix_patches.write(out, "toy", "X", "--- a\\n+++ b\\n"), flush=True)
sys.stdin.read()  # running until the test closes its stdin
"""


def report(folder: Path, links: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    doc = {"target": "toy", "fixes": [{"id": "X", "patch": x} for x in links], "fixed": {}}
    (folder / "findings.json").write_text(json.dumps(doc))


@pytest.mark.fault("shared-out-prune")
def test_a_prune_keeps_the_patches_a_running_audit_wrote(tmp_path: Path) -> None:
    out = tmp_path / "reports"
    report(out / "toy-1.0", [fix_patches.write(out, "toy", "Y", "mine\n")])
    other = subprocess.Popen(
        [sys.executable, "-c", OTHER, str(out)], cwd=REPO, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert other.stdout is not None
        link = other.stdout.readline().strip()
        theirs = out / "toy-fixes" / Path(link).name
        assert theirs.is_file(), link
        fix_patches.prune(out)  # this audit finished first
        assert theirs.is_file(), "a running audit's patch was pruned: its report would link none"
    finally:
        assert other.stdin is not None
        other.stdin.close()
        other.wait(timeout=30)
    # the other audit ended without a report that links it (interrupted): no one keeps it
    removed = fix_patches.prune(out)
    assert [p.name for p in removed] == [Path(link).name]
    assert (out / "toy-fixes").is_dir()  # this audit's own patch stays
    assert not (out / fix_patches.CLAIMS).exists(), "the claims of ended processes are left"
