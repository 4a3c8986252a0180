"""Three outcomes, never confused: a failure is a finding only when it arises from what
the target did; ctxaudit's own error is *could not check* (a pytest ERROR, the audit's
exit 2), never a finding, in the tests' classification, the audit's judgement and the
reports."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import FailedHealthCheck

from ctxaudit import audit
from ctxaudit.outcomes import CouldNotCheck, could_not_check, observing
from ctxaudit.target_report import TargetReport, judge
from ctxaudit.targets.base import (
    BaseTarget,
    Described,
    FindingsCheck,
    KnownFinding,
    Resolved,
    known_entry,
)

ROOT = Path(__file__).resolve().parents[2]


def _raised(fn: object) -> BaseException:
    try:
        fn()  # type: ignore[operator]
    except BaseException as exc:  # noqa: BLE001 - the exception is the datum
        return exc
    raise AssertionError("did not raise")


def _target_module(tmp_path: Path) -> object:
    """A module outside ctxaudit's folders: the target's code, as far as a traceback says."""
    path = tmp_path / "target_code.py"
    path.write_text("def store(rows):\n    return rows['turn']\n")
    spec = importlib.util.spec_from_file_location("target_code", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.fault("property check fails")
def test_a_property_check_is_a_finding() -> None:
    def check() -> None:
        raise AssertionError("S6: the conversation did not grow")

    assert could_not_check(_raised(check)) is None


@pytest.mark.fault("target raises")
def test_an_error_raised_in_the_target_s_code_is_a_finding(tmp_path: Path) -> None:
    target = _target_module(tmp_path)
    exc = _raised(lambda: target.store({}))  # type: ignore[attr-defined]
    assert isinstance(exc, KeyError) and could_not_check(exc) is None


@pytest.mark.fault("harness error")
def test_an_error_in_ctxaudit_s_own_code_is_could_not_check() -> None:
    async def listing() -> list[int]:
        return []

    def harness() -> None:
        coro = listing()
        coro.close()
        for _ in coro:  # type: ignore[attr-defined]
            pass

    why = could_not_check(_raised(harness))
    assert why is not None and why.startswith("TypeError") and "test_outcomes.py" in why


@pytest.mark.fault("harness error")
def test_an_observation_that_fails_is_could_not_check(tmp_path: Path) -> None:
    target = _target_module(tmp_path)

    def observe() -> None:
        with observing("stored rows"):
            target.store({})  # type: ignore[attr-defined]

    why = could_not_check(_raised(observe))
    assert why is not None and "could not observe stored rows: KeyError" in why


@pytest.mark.fault("harness error")
def test_could_not_check_wins_over_the_failures_beside_it() -> None:
    group = ExceptionGroup(
        "two failures",
        [AssertionError("S1: whose turn"), _raised(lambda: json.loads("{"))],
    )
    assert could_not_check(group) is not None
    assert could_not_check(ExceptionGroup("x", [AssertionError("S1")])) is None


@pytest.mark.fault("hypothesis error")
def test_hypothesis_own_errors_are_could_not_check() -> None:
    @settings(max_examples=5, suppress_health_check=[HealthCheck.too_slow], database=None)
    @given(st.integers().filter(lambda _: False))
    def unsatisfiable(x: int) -> None:
        pass

    exc = _raised(unsatisfiable)
    assert isinstance(exc, FailedHealthCheck) or "Unsatisfiable" in type(exc).__name__
    assert could_not_check(exc) is not None
    assert could_not_check(CouldNotCheck("unknown client shape")) is not None


def test_judge_keeps_could_not_check_out_of_the_findings() -> None:
    report = TargetReport("toy", "1", "toy==1", "ci", 0, 0.0, 1)
    report.tests = [
        {"nodeid": "a", "when": "call", "outcome": "passed", "properties": ["T1"]},
        {"nodeid": "b", "when": "call", "outcome": "failed", "properties": ["T1", "T2"],
         "longrepr": "E   TypeError: boom", "could_not_check": "TypeError: boom (at x.py:1)"},
        {"nodeid": "c", "when": "call", "outcome": "failed", "properties": ["T3"],
         "longrepr": "E   AssertionError: T3: broken"},
    ]  # fmt: skip
    report.known = [
        {"id": "K1", "property": "T4", "repro": "k", "affects": False,
         "could_not_check": "the program's harness failed"},
    ]  # fmt: skip
    judge(report, {"T1": "", "T2": "", "T3": "", "T4": "", "T5": ""})
    assert report.verdicts == {
        "T1": "could not check", "T2": "could not check", "T3": "fails",
        "T4": "could not check", "T5": "not checked",
    }  # fmt: skip
    assert [f.message for f in report.findings] == ["T3: broken"]
    assert [u["nodeid"] for u in report.unchecked] == ["k", "b"]
    assert report.outcome == "fails" and not report.ok
    report.tests.pop()
    report.verdicts, report.findings, report.unchecked = {}, [], []
    judge(report, {"T1": "", "T2": ""})
    assert report.outcome == "could not check" and not report.findings


PLUGIN_SUITE = """
import pytest
from ctxaudit.outcomes import CouldNotCheck

@pytest.mark.properties("T1")
def test_harness_cannot_drive():
    raise CouldNotCheck("a client shape the harness does not know")

@pytest.mark.properties("T2")
def test_target_breaks():
    assert False, "T2: broken"
"""


@pytest.mark.fault("harness error")
def test_pytest_reports_could_not_check_as_an_error_not_a_failure(tmp_path: Path) -> None:
    (tmp_path / "test_suite.py").write_text(textwrap.dedent(PLUGIN_SUITE))
    run = subprocess.run(
        [sys.executable, "-m", "pytest", str(tmp_path / "test_suite.py"), "-q",
         "-p", "no:cacheprovider", "-p", "ctxaudit.pytest_outcomes", "-o", "markers=properties",
         "--rootdir", str(tmp_path)],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
    )  # fmt: skip
    last = run.stdout.strip().splitlines()[-1]
    assert "1 failed" in last and "1 error" in last, run.stdout
    assert "ERROR (could not check)" in run.stdout and "ctxaudit could not check" in run.stdout


@pytest.mark.gitreins
@pytest.mark.fault("harness error on a real tree")
def test_an_adapter_bug_on_gitreins_is_could_not_check_never_a_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pinned gitreins, every loop drive failing in ctxaudit's adapter: no finding,
    the properties it drives read "could not check", the known findings' programs are
    neither reproducing nor not, and the audit's report says so."""
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p tests.faults.harness_bug")
    monkeypatch.setenv("CTXAUDIT_FIXES", "0")
    (target,) = audit.parse_target("gitreins")
    # the smoke profile: what is asked is how each outcome is read, not the search
    report = audit.run_target(target, "smoke", 0, tmp_path / "reports")
    assert report.findings == [], [f.message for f in report.findings]
    assert report.unchecked
    unchecked = [k for k in report.known if k.get("could_not_check")]
    assert unchecked and not any(k["affects"] for k in unchecked)
    # the findings whose programs never drive the loop (configuration parsing) still
    # reproduce: the adapter bug hides nothing it does not touch
    assert all(k["property"] == "B6" for k in report.known if k["affects"]), report.known
    for prop in ("V1", "V3", "B3"):
        assert report.verdicts[prop] == "could not check", report.verdicts
    assert all("TypeError" in u["why"] for u in report.unchecked if u["nodeid"] != "-")
    md = (tmp_path / "reports" / target.label / "findings.md").read_text()
    assert "**could not check**" in md and "## ctxaudit could not check" in md
    data = json.loads((tmp_path / "reports" / target.label / "findings.json").read_text())
    assert data["unchecked"] and not data["findings"]


def _spin(args: list[str]) -> None:
    while True:
        pass


def _die(args: list[str]) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _broken(args: list[str]) -> None:
    raise TypeError("an adapter bug in the case's child")


@pytest.mark.fault("case child loops")
def test_a_case_child_that_loops_is_stopped_by_its_cpu_time_a_finding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The verdict on a target that never answers does not depend on the machine's
    load: the kernel stops the child after CPU_LIMIT seconds of its own work."""
    from ctxaudit.targets.gitreins import config as cfg

    monkeypatch.setattr(cfg, "CPU_LIMIT", 1)
    monkeypatch.setattr(cfg, "_work", _spin)
    payload, why = cfg._forked_run([str(ROOT), "{}"])
    assert payload is None and why == "killed: used 1 s of CPU without an answer"


@pytest.mark.fault("kill a case child")
def test_a_case_child_killed_from_outside_is_could_not_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ctxaudit.targets.gitreins import config as cfg

    monkeypatch.setattr(cfg, "_work", _die)
    with pytest.raises(CouldNotCheck, match="killed by SIGKILL from outside"):
        cfg._forked_run([str(ROOT), "{}"])
    monkeypatch.setattr(cfg, "_work", _broken)
    with pytest.raises(CouldNotCheck, match="in the case's child: TypeError: an adapter bug"):
        cfg._forked_run([str(ROOT), "{}"])


def test_a_replay_that_no_longer_fails_is_an_answer_not_an_error() -> None:
    """In a replay of a shrunk example, Hypothesis' DidNotReproduce says the example
    passes now (the fix audit reads it): not ctxaudit's error."""
    from hypothesis.errors import DidNotReproduce

    assert could_not_check(DidNotReproduce("Expected the test to raise an error")) is None


@pytest.mark.fault("injected fault escapes the target")
def test_a_fault_the_harness_injected_that_escapes_the_target_is_a_finding() -> None:
    """A failing LLM call the harness raises on purpose, from its own code: when the
    target lets it escape, that is the target's doing."""
    from ctxaudit.outcomes import injected

    def fake_llm_call() -> None:
        raise injected(ConnectionError("the LLM is unreachable"))

    assert could_not_check(_raised(fake_llm_call)) is None

    def unmarked() -> None:
        raise ConnectionError("the harness's own connection failed")

    assert could_not_check(_raised(unmarked)) is not None


class _Unbuildable(BaseTarget):
    """A toy target whose environment does not build."""

    name = "unbuildable"
    properties = {"T1": "toy"}
    spec_forms = "'unbuildable'"
    suites = ("tests/faults/test_outcomes.py",)

    def claims(self, spec: str) -> bool:
        return spec == "unbuildable"

    def expand(self, spec: str, repo: Path | None = None) -> list[Described]:
        return [Described(self.name, spec, "1.0")]

    def resolve(self, spec: str | None = None, repo: Path | None = None) -> Resolved:
        return Resolved(self.name, "1.0", ROOT, "unbuildable", copy_dir="x")

    def suite_process(self, target: Described, tmp: Path) -> tuple[str, dict[str, str]] | None:
        raise RuntimeError("uv could not build the environment: no wheel for pydantic-core")


@pytest.mark.fault("environment does not build")
def test_an_environment_that_does_not_build_is_could_not_check_and_not_cached(
    tmp_path: Path,
) -> None:
    from ctxaudit import targets
    from ctxaudit.result_cache import StepCache, StepCaches

    targets.register(_Unbuildable())
    try:
        (target,) = audit.parse_target("unbuildable")
        report = audit.run_target(target, "ci", 0, tmp_path / "reports")
        assert report.outcome == "could not check" and not report.findings
        assert report.verdicts == {"T1": "could not check"}
        assert "no wheel for pydantic-core" in report.unchecked[0]["why"]
        md = (tmp_path / "reports" / target.label / "findings.md").read_text()
        assert "COULD NOT CHECK" in md
        steps = StepCaches(True, StepCache(tmp_path / "cache"))
        steps.store_properties("k" * 64, report, tmp_path / "reports")
        assert steps.reuse_properties("k" * 64, target, tmp_path / "reports") is None
    finally:
        targets.unregister("unbuildable")


@pytest.mark.fault("known finding's check did not run")
def test_a_baseline_entry_whose_check_did_not_run_is_neither_stale_nor_accepted() -> None:
    """LC-STALE-REPORT-REFOLDS' check ended in ctxaudit's own error (the suite could not
    start), or no known finding was checked at all: its baseline entry does not "no
    longer reproduce" (remove it!) and is not accepted either; the verdict says why it
    could not be checked."""
    from types import SimpleNamespace

    from ctxaudit.baseline import Baseline, Entry, judge

    entry = Entry("LC-STALE-REPORT-REFOLDS", "langchain", "C1", "upstream")
    b = Baseline(Path("b.toml"), (entry,))
    why = "the known findings' check did not run: pytest exit 4"
    unchecked = {"id": entry.id, "affects": False, "could_not_check": why}
    for known in ([unchecked], []):
        report = SimpleNamespace(target="langchain", version="1.5.2", findings=[], known=known)
        verdict = judge(b, [report])
        assert not verdict.stale and not verdict.accepted and not verdict.fails
        assert [(e.id, "langchain-1.5.2" in w) for e, w in verdict.unchecked] == [(entry.id, True)]
    assert why in judge(b, [SimpleNamespace(target="langchain", version="1.5.2", findings=[],
                                            known=[unchecked])]).unchecked[0][1]  # fmt: skip
    # checked on one version, where it does not reproduce: stale, as before
    checked = {"id": entry.id, "affects": False}
    report = SimpleNamespace(target="langchain", version="1.3.14", findings=[], known=[checked])
    assert [e.id for e in judge(b, [report]).stale] == [entry.id]


SKIPPED_CHECK = """
import pytest

@pytest.fixture
def environment():
    pytest.skip("the target's environment could not start")

def test_known(environment):
    assert True
"""


class _SkippedCheck(BaseTarget):
    """A toy target whose known finding's check skips before its call (its environment
    could not start)."""

    name = "skippedcheck"
    properties = {"T1": "toy"}
    known = KnownFinding("TOY-K", "T1", "the toy's finding", "all", "test_known.py::test_known")

    def __init__(self, home: Path) -> None:
        self.home = home

    def claims(self, spec: str) -> bool:
        return spec == self.name

    def expand(self, spec: str, repo: Path | None = None) -> list[Described]:
        return [Described(self.name, spec, "1.0")]

    def findings(self) -> list[KnownFinding]:
        return [self.known]

    def findings_check(self, target: Described, tmp: Path) -> FindingsCheck:
        def read(outcome: Mapping[str, str]) -> list[dict[str, Any]]:
            affects = outcome.get(self.known.repro) == "passed"
            return [known_entry(self.known, registered=True, affects=affects)]

        return FindingsCheck([str(self.home / "test_known.py")], {}, read)


def run_skipped_check(suites: Path) -> tuple[list[dict[str, Any]], str]:
    """The toy target's known finding's check (``SKIPPED_CHECK``, written into
    ``suites``) run as the audit runs a suite: its tests and output."""
    from ctxaudit import suite_run, targets

    (suites / "test_known.py").write_text(SKIPPED_CHECK)
    targets.register(_SkippedCheck(suites))
    try:
        target = Described("skippedcheck", "skippedcheck", "1.0")
        _, tests, output, _ = suite_run.run_pytest(
            target, [str(suites / "test_known.py")], "ci", None, {}
        )
    finally:
        targets.unregister("skippedcheck")
    return tests, output


HARNESS_ERROR_CHECK = """
from ctxaudit.targets import get

def test_known():
    get("no-such-target")  # ctxaudit's own code raises: its harness failed
"""


@pytest.mark.fault("known finding's check did not run")
@pytest.mark.parametrize(
    ("check", "said"),
    [(SKIPPED_CHECK, "skipped in its setup"), (HARNESS_ERROR_CHECK, "no-such-target")],
    ids=["skipped-in-setup", "ctxaudits-own-error"],
)
def test_a_known_finding_whose_check_did_not_run_is_could_not_check(
    check: str, said: str, tmp_path: Path
) -> None:
    """Its test skipped in setup (pytest exit 0, a test recorded), or failed inside
    ctxaudit's own code: no verdict, "could not check" with the cause, never "does not
    reproduce"."""
    from ctxaudit import targets

    (tmp_path / "test_known.py").write_text(check)
    targets.register(_SkippedCheck(tmp_path))
    try:
        (entry,) = audit.known_findings(Described("skippedcheck", "skippedcheck", "1.0"))
    finally:
        targets.unregister("skippedcheck")
    assert not entry["affects"]
    assert said in entry.get("could_not_check", ""), entry
