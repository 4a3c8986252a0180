"""A harness error on a real lightspeed-stack tree: ctxaudit's own error is *could not
check*, never a finding, from one observation up to the audit's report.

The fault: the OGX client's ``conversations.items.list`` hands the harness (and only
the harness: the tree's own calls go through) a coroutine of a page of a type it does
not know, as a newer client that awaits the call and returns a page once did. Injected
by loading ``tests/lightspeed/inenv/test_harness_errors.py`` as a plugin in the tree's
environment. Needs the repository (``--lightspeed-repo``) and builds or reuses the
tree's environment (``--lightspeed``, default main).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxaudit import audit
from ctxaudit.targets.base import FindingsCheck
from ctxaudit.targets.lightspeed import runner
from ctxaudit.targets.lightspeed import target as lightspeed_target
from ctxaudit.targets.lightspeed.tree import repo_from, resolve

FAULT = "-p tests.lightspeed.inenv.test_harness_errors"
HARNESS_TESTS = f"{runner.INENV}/test_harness_errors.py"
PROPERTIES = ("S1", "S2", "S3", "S6", "S7", "S9", "C1")

pytestmark = [pytest.mark.lightspeed, pytest.mark.fault("harness error")]


def _spec_and_repo(request: pytest.FixtureRequest) -> tuple[str, Path]:
    repo = repo_from(request.config.getoption("--lightspeed-repo") or None)
    if repo is None:
        pytest.skip("needs the lightspeed-stack repository: give --lightspeed-repo=PATH")
    return request.config.getoption("--lightspeed") or "lightspeed-stack@main", repo


def test_the_three_outcomes_on_a_real_tree(request: pytest.FixtureRequest) -> None:
    """The in-environment test of holds, fails and could not check passes on the tree."""
    spec, repo = _spec_and_repo(request)
    run = runner.run_suite(
        resolve(spec, repo),
        [HARNESS_TESTS],
        extra_env={"CTXAUDIT_LIGHTSPEED_HARNESS_CHECKS": "1"},
    )
    last = run.output.strip().splitlines()[-1]
    assert run.passed and "1 passed" in last, run.output[-3000:]


def test_a_harness_error_on_a_real_tree_is_could_not_check(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every observation failing in the harness: no finding, every property and every
    known finding "could not check", none reproducing, and the report says so."""
    spec, repo = _spec_and_repo(request)
    monkeypatch.setenv("PYTEST_ADDOPTS", FAULT)
    monkeypatch.setenv("CTXAUDIT_FIXES", "0")
    record: dict[str, object] = {}  # the reproduction record the programs' run wrote
    check = lightspeed_target.TARGET.findings_check

    def keeping_the_record(target: object, tmp: Path) -> FindingsCheck:
        made = check(target, tmp)  # type: ignore[arg-type]

        def read(outcome: dict[str, str]) -> list[dict[str, object]]:
            record.update(json.loads((tmp / "reproduction.json").read_text()))
            return made.read(outcome)

        return FindingsCheck(made.paths, made.env, read)

    monkeypatch.setattr(lightspeed_target.TARGET, "findings_check", keeping_the_record)
    (target,) = audit.parse_target(spec, {"lightspeed-stack": repo})
    report = audit.run_target(target, "ci", 0, tmp_path / "reports")
    unchecked = record["could_not_check"]
    assert record["reproducing"] == [] and isinstance(unchecked, dict), record
    assert sorted(unchecked) == sorted(k["id"] for k in report.known), record
    assert report.findings == [], [f.message for f in report.findings]
    assert report.outcome == "could not check" and report.unchecked
    for prop in PROPERTIES:
        assert report.verdicts[prop] == "could not check", report.verdicts
    assert report.known and not any(k["affects"] or k["registered"] for k in report.known)
    for entry in report.known:
        why = entry.get("could_not_check") or ""
        assert "conversation items" in why and "UnknownPage" in why, entry
    data = json.loads((tmp_path / "reports" / target.label / "findings.json").read_text())
    assert data["outcome"] == "could not check" and not data["findings"]
