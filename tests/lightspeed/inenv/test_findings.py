"""Regression tests of the known lightspeed-stack findings.

A finding registered for this tree must reproduce here, with a failure of
the property it names; when the tree is fixed the test fails and the
registry (``ctxaudit/targets/lightspeed/findings.py``) is updated. A finding
not registered here is reported either way, never failed: other trees are
what the audit reports on.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import pytest

from ctxaudit.targets.lightspeed.findings import FINDINGS, Finding, names_property

TAG = os.environ.get("CTXAUDIT_LIGHTSPEED_TAG") or None
COMMIT = os.environ.get("CTXAUDIT_LIGHTSPEED_COMMIT") or None
#: findings held to reproduce here although not registered for this tree: the fix
#: audit's regression run of a finding the audit saw reproduce on this version
#: (ctxaudit/fixaudit.py sets it to the one finding whose fix it verifies)
ASSUMED = {i for i in os.environ.get("CTXAUDIT_FINDINGS_ASSUMED", "").split(",") if i}


@pytest.mark.parametrize("finding", FINDINGS, ids=lambda f: f.id)
def test_known_finding(
    finding: Finding, reproduction: Mapping[str, str | None], reproducing: tuple[Finding, ...]
) -> None:
    message = reproduction[finding.id]
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
