"""Regression tests of the known lightspeed-stack findings.

A finding registered for this tree must reproduce here, with a failure of
the property it names; when the tree is fixed the test fails and the
registry (``ctxaudit/targets/lightspeed/findings.py``) is updated. A finding
not registered here is reported either way, never failed: other trees are
what the audit reports on.

A program that ends in ctxaudit's own error (``ctxaudit.outcomes.could_not_check``:
the harness cannot drive or observe this tree) neither reproduces nor does not: its
test raises :class:`~ctxaudit.outcomes.CouldNotCheck`, and the reproduction record
(``CTXAUDIT_LIGHTSPEED_REPRODUCTION``, read by the audit's ``findings_check``) lists it
under ``could_not_check`` with the reason, never under ``reproducing``. So does one
that ends in any other exception before its verdict (the tree's, or an HTTP client's
that timed out on a loaded machine): its test fails with it, and the record says ctxaudit
could not check it, never that it does not reproduce.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ctxaudit import atomic
from ctxaudit.targets.lightspeed.findings import FINDINGS, Finding, names_property
from ctxaudit.targets.lightspeed.program_outcome import outcome
from tests.lightspeed.inenv import programs

TAG = os.environ.get("CTXAUDIT_LIGHTSPEED_TAG") or None
COMMIT = os.environ.get("CTXAUDIT_LIGHTSPEED_COMMIT") or None
#: findings held to reproduce here although not registered for this tree: the fix
#: audit's regression run of a finding the audit saw reproduce on this version
#: (ctxaudit/fixaudit/single_fix.py sets it to the one finding whose fix it verifies)
ASSUMED = {i for i in os.environ.get("CTXAUDIT_FINDINGS_ASSUMED", "").split(",") if i}
#: where the audit reads which known findings reproduce here (unset: not recorded)
RECORD = os.environ.get("CTXAUDIT_LIGHTSPEED_REPRODUCTION")
#: the programs that ended in ctxaudit's own error this session: finding id -> why
UNCHECKED: dict[str, str] = {}


@pytest.mark.parametrize("finding", FINDINGS, ids=lambda f: f.id)
def test_known_finding(finding: Finding, reproduction: programs.Reproduction) -> None:
    try:
        message = program_outcome(reproduction, finding)
    finally:
        record(reproduction)
    print(f"{finding.id} ({finding.prop}): {'reproduces' if message else 'does not reproduce'}")
    if not finding.registered_for(TAG, COMMIT) and finding.id not in ASSUMED:
        first = message.splitlines()[0] if message else "holds"
        pytest.skip(f"{finding.id} is not registered for this tree; its program: {first}")
    assert message is not None, (
        f"{finding.id} no longer reproduces on this tree ({finding.summary}); "
        "narrow or remove it in ctxaudit/targets/lightspeed/findings.py"
    )
    missing = [p for p in (finding.prop, *finding.also) if not names_property(message, p)]
    assert not missing, f"{finding.id}'s program fails, but not on {missing}:\n{message}"


def program_outcome(reproduction: programs.Reproduction, finding: Finding) -> str | None:
    """The finding's program's failure message, or None; an exception before its verdict
    (ctxaudit's own: CouldNotCheck; the tree's: raised as it was) is recorded as could
    not check (``ctxaudit/targets/lightspeed/program_outcome.py``)."""
    return outcome(lambda: reproduction[finding.id], finding.id, UNCHECKED)


def record(reproduction: programs.Reproduction) -> None:
    """Write what this session's programs showed: the findings that reproduce (their
    program fails on the property they name), every message, and the programs ctxaudit
    could not check. Only programs that ran are named; each write is whole."""
    if not RECORD:
        return
    ran = set(reproduction.ran())
    messages = {fid: reproduction[fid] for fid in programs.PROGRAMS if fid in ran}
    data = {
        "reproducing": [f.id for f in programs.reproducing(messages)],
        "messages": messages,
        "could_not_check": {fid: UNCHECKED[fid] for fid in programs.PROGRAMS if fid in UNCHECKED},
    }
    atomic.write_text(Path(RECORD), json.dumps(data, indent=1))
