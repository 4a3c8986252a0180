"""Fault injection into the caches: no wrong verdict is ever cached.

- a mutant's forked child killed from outside by SIGKILL (as the OOM killer would) is
  run once more, and when it is killed again it is an *error*: no verdict, not cached,
  and the gate cannot pass;
- every way a cache entry can be wrong (a bogus status, non-numeric seconds, the wrong
  shape, a status flipped by hand under the old digest, a truncated file, a file path
  that leaves the report folder) is a miss said in one line, and the run goes on to the
  right verdict;
- a mutation run that crashes in ctxaudit's own code exits >= 2 and is not stored by
  the audit's step cache.

The kill comes from this process: a ``sitecustomize`` on the worker's PYTHONPATH makes
the chosen forks of the worker (counted with ``os.register_at_fork``: the first is the
baseline, then one per mutant run) write their pid and stop; a thread here SIGKILLs
each pid written. Nothing in ctxaudit knows about it.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ctxaudit import result_cache
from ctxaudit.targets.base import Described
from mutation import cache, driver, engine, report
from mutation.config import TargetConfig

REPO = Path(__file__).resolve().parents[2]

TOY = """
def over(n):
    return n >= 10
"""

# the boundary (>= 10 -> > 10) is never tried: that mutant survives
TESTS = """
from toyfault.meter import over


def test_over():
    assert over(20)
    assert not over(3)
"""

SITE = """
import os, signal, sys

if "mutation.worker" in sys.orig_argv:
    _stop = {int(n) for n in os.environ.get("FAULT_STOP_FORKS", "").split(",") if n}
    _forks = [0]

    def _count():
        _forks[0] += 1

    def _stop_here():
        if _forks[0] in _stop:
            with open(os.environ["FAULT_PIDS"], "a") as f:
                f.write(f"{os.getpid()}\\n")
            os.kill(os.getpid(), signal.SIGSTOP)  # until the test kills it

    os.register_at_fork(before=_count, after_in_child=_stop_here)
"""


class Toy:
    """A one-function target, its suite, and its surviving boundary mutant."""

    def __init__(self, tmp: Path) -> None:
        root = tmp / "src"
        (root / "toyfault").mkdir(parents=True)
        (root / "toyfault" / "__init__.py").write_text("")
        (root / "toyfault" / "meter.py").write_text(textwrap.dedent(TOY))
        tests = tmp / "toytests"
        tests.mkdir()
        (tests / "test_toy.py").write_text(TESTS)
        (tmp / "none.toml").write_text("")
        self.tmp = tmp
        self.cfg = TargetConfig(
            name="toyfault", package="toyfault", tests=(str(tests),),
            pytest_args=("-p", "no:hypothesispytest"), files=(("toyfault/*.py", ("*",)),),
        )  # fmt: skip
        self.plan = engine.build_plan("toyfault", self.cfg, root, "0", tmp / "none.toml")
        self.runs = 0

    def mutant(self) -> engine.Mutant:
        """A fresh (pending) copy of the boundary mutant."""
        found = next(
            m for m in self.plan.mutants if (m.kind, m.original, m.replacement) ==
            ("wrong-comparison", ">= 10", "> 10")
        )  # fmt: skip
        fresh = copy.deepcopy(found)
        fresh.status = "pending"
        return fresh

    def run(self, m: engine.Mutant) -> Path:
        """Run the worker on ``m`` (one job, one seed, no recheck); the work folder."""
        self.runs += 1
        work = self.tmp / f"work{self.runs}"
        modules = engine.write_work_tree(self.plan, {m.id}, work, "toyfault")
        planned = next(p for p in self.plan.mutants if p.id == m.id)
        m.mutmut_name, m.function_key = planned.mutmut_name, planned.function_key
        settings = driver.WorkerSettings(
            modules=modules, jobs=1, recheck="none", timeout_constant=30.0
        )
        driver.run_worker(self.plan, self.cfg, [m], work, settings)
        return work


@contextlib.contextmanager
def killing(tmp: Path, monkeypatch: pytest.MonkeyPatch, forks: str) -> Iterator[list[int]]:
    """SIGKILL the worker's forks numbered in ``forks`` ("2,3"); yields the pids killed."""
    site = tmp / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(SITE)
    pids_file = tmp / "pids.txt"
    pids_file.write_text("")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), str(REPO)]))
    monkeypatch.setenv("FAULT_STOP_FORKS", forks)
    monkeypatch.setenv("FAULT_PIDS", str(pids_file))
    killed: list[int] = []
    done = threading.Event()

    def killer() -> None:
        while not done.wait(0.02):
            for line in pids_file.read_text().splitlines(keepends=True):
                pid = int(line) if line.endswith("\n") else None
                if pid is not None and pid not in killed:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                    killed.append(pid)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    try:
        yield killed
    finally:
        done.set()
        thread.join()
        monkeypatch.delenv("FAULT_STOP_FORKS")


def events(work: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (work / "results.jsonl").read_text().splitlines()]


def a_cache(tmp: Path) -> cache.VerdictCache:
    return cache.VerdictCache("target", "suite", "profile", (0,), directory=tmp / "verdicts")


def gate_of(m: engine.Mutant) -> dict[str, Any]:
    doc = {"mutants": [engine.mutant_to_json(m)], "seeds": [0]}
    return report.apply_gate(doc, {})


@pytest.fixture
def toy(tmp_path: Path) -> Toy:
    return Toy(tmp_path)


@pytest.mark.fault("sigkill-mutant-child-once")
def test_a_mutant_child_killed_once_is_run_again(
    toy: Toy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    m = toy.mutant()
    with killing(tmp_path, monkeypatch, "2") as killed:
        work = toy.run(m)
    assert len(killed) == 1, "the fault was not injected"
    reruns = [e for e in events(work) if e["event"] == "rerun"]
    assert [e["reason"] for e in reruns] == ["died by SIGKILL"]
    assert m.status == "survived", (m.status, m.reason)  # its verdict, not a kill
    c = a_cache(tmp_path)
    assert c.store([m]) == 1
    again = toy.mutant()
    assert c.fill([again]) == [again] and again.status == "survived"


@pytest.mark.fault("sigkill-mutant-child-twice")
def test_a_mutant_child_killed_twice_is_an_error_and_never_cached(
    toy: Toy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    m = toy.mutant()
    with killing(tmp_path, monkeypatch, "2,3") as killed:
        toy.run(m)
    assert m.status == "error", (m.status, m.reason)  # not "crashed": not detected
    assert len(killed) == 2, "the fault was not injected"
    assert "died by SIGKILL" in m.reason
    gate = gate_of(m)
    assert gate["gate"]["passed"] is False and gate["gate"]["in_error"] == [m.id]
    assert any(m.id in e and "in error" in e for e in gate["errors"])
    md = report.to_markdown({**gate, "target": "toyfault", "version": "0", "sources": {}})
    assert "gate cannot pass while a gated mutant is in error" in md
    c = a_cache(tmp_path)
    assert c.store([m]) == 0
    assert not list((tmp_path / "verdicts").rglob("*.json"))
    # the next run finds nothing cached and runs it: its real verdict
    again = toy.mutant()
    assert c.fill([again]) == []
    toy.run(again)
    assert again.status == "survived"
    assert gate_of(again)["gate"]["passed"] is False  # a gated survivor, as it should


# -- corrupt cache entries --------------------------------------------------------


def rewrite(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def the_entry(directory: Path) -> Path:
    (path,) = [p for p in directory.rglob("*.json")]
    return path


VERDICT_FAULTS: dict[str, Callable[[Path], None]] = {
    "bogus status": lambda p: rewrite(p, lambda d: d["verdict"].update(status="bogus")),
    "non-numeric seconds": lambda p: rewrite(p, lambda d: d["verdict"].update(seconds="abc")),
    "wrong shape": lambda p: rewrite(p, lambda d: d.update(verdict=[d["verdict"]])),
    # survived -> killed by hand; the digest beside it is the old one
    "flipped status": lambda p: rewrite(p, lambda d: d["verdict"].update(status="killed")),
    "truncated file": lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]),
}


@pytest.fixture(scope="module")
def surviving(tmp_path_factory: pytest.TempPathFactory) -> engine.Mutant:
    """The boundary mutant as a real run left it (survived)."""
    toy = Toy(tmp_path_factory.mktemp("surviving"))
    m = toy.mutant()
    toy.run(m)
    assert m.status == "survived"
    return m


@pytest.mark.fault("corrupt-verdict-cache")
@pytest.mark.parametrize("fault", VERDICT_FAULTS)
def test_a_corrupt_verdict_entry_is_a_miss_and_the_mutant_runs_again(
    fault: str, surviving: engine.Mutant, toy: Toy, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    c = a_cache(tmp_path)
    assert c.store([surviving]) == 1
    path = the_entry(tmp_path / "verdicts")
    VERDICT_FAULTS[fault](path)
    capsys.readouterr()
    fresh = toy.mutant()
    assert c.fill([fresh]) == [] and fresh.status == "pending", fault
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and str(path) in lines[0], lines
    # the run goes on: the mutant runs, and its verdict is stored and read again
    toy.run(fresh)
    assert fresh.status == "survived"
    assert c.store([fresh]) == 1
    after = toy.mutant()
    assert c.fill([after]) == [after] and after.status == "survived"


TARGET = Described("ledger", "", "0.1.0")
KEY = "ab" * 32
#: what a mutation run's mutation.json says of the version it mutated
MUTATION_JSON = {"config": {"target": "ledger", "version": "0.1.0"}}


def step_entry(directory: Path) -> Path:
    return directory / KEY[:2] / f"{KEY}.json"


def reseal(data: dict[str, Any]) -> None:
    """Give an edited entry a digest that matches (as a careful hand would)."""
    content = {k: data[k] for k in ("key", "step", "value", "files")}
    data["digest"] = result_cache._digest(content)


def sealed(change: Callable[[dict[str, Any]], None]) -> Callable[[Path, Path], None]:
    """Edit the entry and give it a digest that matches (as a careful hand would)."""

    def edit(d: dict[str, Any]) -> None:
        change(d)
        reseal(d)

    return lambda p, _tmp: rewrite(p, edit)


def escape(rel: Callable[[Path], str]) -> Callable[[Path, Path], None]:
    """The entry's mutation.md moved to ``rel(tmp_path)``, digest resealed."""

    def change(p: Path, tmp: Path) -> None:
        def edit(d: dict[str, Any]) -> None:
            d["files"][rel(tmp)] = d["files"].pop("mutation.md")

        sealed(edit)(p, tmp)

    return change


STEP_FAULTS: dict[str, Callable[[Path, Path], None]] = {
    "bogus exit code": sealed(lambda d: d["value"].update(code="bogus")),
    "non-integer exit code": sealed(lambda d: d["value"].update(code=1.5)),
    "a crash's exit code": sealed(lambda d: d["value"].update(code=3)),
    "wrong shape": sealed(lambda d: d.update(value=[1, "mutation gate FAILED"])),
    # the gate FAILS -> passes by hand; the digest beside it is the old one
    "flipped status": lambda p, _t: rewrite(p, lambda d: d["value"].update(code=0)),
    "truncated file": lambda p, _t: p.write_bytes(p.read_bytes()[:100]),
    "path with ..": escape(lambda _t: "../../outside.md"),
    "absolute path": escape(lambda t: str(t / "outside.md")),
}


@pytest.mark.fault("corrupt-step-cache")
@pytest.mark.parametrize("fault", STEP_FAULTS)
def test_a_corrupt_step_entry_is_a_miss_and_writes_nothing_outside(
    fault: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    steps = result_cache.StepCaches(True, result_cache.StepCache(tmp_path / "steps"))
    out = tmp_path / "out"
    folder = out / TARGET.label
    folder.mkdir(parents=True)
    (folder / "mutation.json").write_text(json.dumps(MUTATION_JSON))
    (folder / "mutation.md").write_text("gate FAILS\n")
    steps.store_mutation(KEY, 1, "mutation gate FAILED", TARGET, out)
    path = step_entry(tmp_path / "steps")
    STEP_FAULTS[fault](path, tmp_path)
    (folder / "mutation.md").unlink()
    capsys.readouterr()
    assert steps.reuse_mutation(KEY, TARGET, out) is None, fault
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and str(path) in lines[0], lines
    assert not list(tmp_path.rglob("*.md")), "a file was restored"  # inside or out
    # the audit runs the step again and stores its (right) result, which is reused
    (folder / "mutation.md").write_text("gate FAILS\n")
    steps.store_mutation(KEY, 1, "mutation gate FAILED", TARGET, out)
    (folder / "mutation.md").unlink()
    assert steps.reuse_mutation(KEY, TARGET, out) == (1, "mutation gate FAILED")
    assert (folder / "mutation.md").read_text() == "gate FAILS\n"


@pytest.mark.fault("step-cache-path-escape")
@pytest.mark.parametrize("rel", ["../outside.md", "sub/../../outside.md", "ABS", "link/x.md"])
def test_restore_never_writes_outside_the_report_folder(tmp_path: Path, rel: str) -> None:
    folder = tmp_path / "out" / "ledger-0.1.0"
    (folder / "keep").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (folder / "link").symlink_to(tmp_path / "elsewhere")  # a folder that leads out
    rel = str(tmp_path / "outside.md") if rel == "ABS" else rel
    with contextlib.suppress(ValueError):  # refused (result_cache.InvalidEntry)
        result_cache.restore(folder, {"keep/fine.md": b"in", rel: b"out"})
    assert not list(tmp_path.rglob("outside.md")), "written outside the report folder"
    assert not list((tmp_path / "elsewhere").iterdir()), "written through a link"
    assert not (folder / "keep" / "fine.md").exists(), "half an entry was restored"


@pytest.mark.fault("corrupt-step-cache")
@pytest.mark.parametrize("fault", ["non-numeric seconds", "flipped status", "wrong shape"])
def test_a_corrupt_property_entry_is_a_miss(
    fault: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ctxaudit.target_report import Finding, TargetReport

    store = result_cache.StepCache(tmp_path / "steps")
    steps = result_cache.StepCaches(True, store)
    rep = TargetReport(
        target="ledger", version="0.1.0", spec="", profile="ci", seed=1, elapsed_s=2.0,
        exit_status=1, verdicts={"S1": "fails"}, findings=[Finding(["S1"], "S1: x", "t", "")],
        tests=[{"nodeid": "t", "properties": ["S1"], "outcome": "failed"}],
    )  # fmt: skip
    steps.store_properties(KEY, rep, tmp_path / "out")

    def edit(d: dict[str, Any]) -> None:
        if fault == "non-numeric seconds":
            d["value"]["elapsed_s"] = "abc"
            reseal(d)
        elif fault == "flipped status":  # fails -> holds, the old digest
            d["value"]["verdicts"]["S1"] = "holds"
        else:
            d["value"]["findings"] = {"S1": "x"}
            reseal(d)

    rewrite(step_entry(tmp_path / "steps"), edit)
    capsys.readouterr()
    assert steps.reuse_properties(KEY, TARGET, tmp_path / "out") is None
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and "step cache entry" in lines[0], lines


# -- a crashed mutation run -------------------------------------------------------

CRASH_SITE = """
import sys

if sys.orig_argv[1:3] == ["-m", "mutation"]:
    import mutation.engine

    def _planned(*args, **kw):
        raise KeyError("a fault injected into the plan")

    mutation.engine.build_plan = _planned
"""


@pytest.mark.fault("crashed-mutation-run")
def test_a_crashed_mutation_run_is_not_a_verdict_and_is_not_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxaudit import audit

    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(CRASH_SITE)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), str(REPO)]))
    args = ["--target", "ledger", "--only", "ledger/owner.py:*", "--no-coverage", "--seeds", "1"]
    proc = subprocess.run(
        [sys.executable, "-m", "mutation", "run", *args, "--out", str(tmp_path / "out")],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode >= 2, (proc.returncode, proc.stderr[-2000:])
    err = proc.stderr.splitlines()
    own = [i for i, line in enumerate(err) if "ctxaudit's own error" in line]
    assert len(own) == 1 and "KeyError" in err[own[0]], err[-20:]
    assert err[own[0] + 1].startswith("Traceback"), err[own[0] :][:3]
    assert "gate" not in proc.stdout
    assert not (tmp_path / "out" / "mutation.json").exists()
    # the audit's run of the same: its exit code is no verdict, so nothing is stored
    steps = result_cache.StepCaches(True, result_cache.StepCache(tmp_path / "steps"))
    target = Described("ledger", "", "0.1.0")
    options = audit.MutationOptions(other_sample=1.0, peer=False, only=["ledger/owner.py:*"])
    code, output = audit.run_mutation(target, tmp_path / "audit", options=options)
    assert code >= 2, output[-2000:]
    steps.store_mutation(KEY, code, output, target, tmp_path / "audit")
    assert not list((tmp_path / "steps").rglob("*.json"))
    assert steps.reuse_mutation(KEY, target, tmp_path / "audit") is None


# -- an entry used only for what it was made for -------------------------------------


def a_report(**change: Any) -> Any:
    """A ledger report as a property phase leaves it: its properties in the target's
    order (S1 ... S9, C1: not sorted), a fix whose patch the report links."""
    from ctxaudit import targets
    from ctxaudit.target_report import TargetReport

    props = list(targets.get("ledger").properties)
    rep = TargetReport(
        target="ledger", version="0.1.0", spec="", profile="ci", seed=1, elapsed_s=2.0,
        exit_status=0, verdicts={p: "holds" for p in props},
        known=[{"id": "L-1", "property": "S1", "summary": "x", "region": "r", "repro": "t",
                "registered": True, "affects": False}],
        tests=[{"nodeid": "t", "properties": props, "outcome": "passed"}],
        fixed={"applied": [], "combined_patch": "", "verdicts": {p: "holds" for p in props},
               "findings": [], "ok": True, "seeds": [1], "left_out": [], "elapsed_s": 1.0},
    )  # fmt: skip
    for name, value in change.items():
        setattr(rep, name, value)
    return rep


def move_entry(steps: Path, old: str, new: str) -> Path:
    """The entry stored under ``old`` copied under ``new``, its key and digest made to
    match (as a careful hand, or a bug, would)."""
    data = json.loads((steps / old[:2] / f"{old}.json").read_text())
    data["key"] = new
    reseal(data)
    path = steps / new[:2] / f"{new}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


@pytest.mark.fault("foreign-step-entry")
@pytest.mark.parametrize("other", ["seed", "profile", "version", "target"])
def test_a_property_entry_is_used_only_for_what_it_was_made_for(
    other: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    steps = result_cache.StepCaches(True, result_cache.StepCache(tmp_path / "steps"))
    made = steps.properties_key(TARGET, "ci", 1, ())
    assert made is not None
    steps.store_properties(made, a_report(), tmp_path / "out")
    wanted, target = "cd" * 32, TARGET
    if other == "seed":
        wanted = steps.properties_key(TARGET, "ci", 2, ()) or ""
    elif other == "profile":
        wanted = steps.properties_key(TARGET, "thorough", 1, ()) or ""
    elif other == "version":
        target = Described("ledger", "", "0.2.0")
    else:
        target = Described("gitreins", "", "0.1.0")
    path = move_entry(tmp_path / "steps", made, wanted)
    capsys.readouterr()
    assert steps.reuse_properties(wanted, target, tmp_path / "out") is None, other
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and "made for" in lines[0], lines
    assert not list((tmp_path / "out").rglob("findings.*")), "a report was written"
    # the entry under its own key is still reused for its own request
    assert steps.reuse_properties(made, TARGET, tmp_path / "out") is not None


@pytest.mark.fault("foreign-step-entry")
def test_a_mutation_entry_is_used_only_for_its_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    steps = result_cache.StepCaches(True, result_cache.StepCache(tmp_path / "steps"))
    out = tmp_path / "out"
    (out / TARGET.label).mkdir(parents=True)
    (out / TARGET.label / "mutation.json").write_text(json.dumps(MUTATION_JSON))
    steps.store_mutation(KEY, 0, "mutation gate passes", TARGET, out)
    other = Described("ledger", "", "0.2.0")
    path = move_entry(tmp_path / "steps", KEY, "cd" * 32)
    capsys.readouterr()
    assert steps.reuse_mutation("cd" * 32, other, out) is None
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and "made for" in lines[0], lines
    assert not (out / other.label).exists(), "another version's report was restored"
    assert steps.reuse_mutation(KEY, TARGET, out) == (0, "mutation gate passes")


@pytest.mark.fault("reused-report-order")
def test_a_reused_report_is_the_fresh_one_byte_for_byte(tmp_path: Path) -> None:
    from ctxaudit.audit import write_reports

    steps = result_cache.StepCaches(True, result_cache.StepCache(tmp_path / "steps"))
    fresh, again = tmp_path / "fresh", tmp_path / "again"
    rep = a_report()
    write_reports(rep, fresh)
    key = steps.properties_key(TARGET, "ci", 1, ())
    steps.store_properties(key, rep, fresh)
    assert steps.reuse_properties(key, TARGET, again) is not None
    for name in ("findings.json", "findings.md"):
        ours = (again / TARGET.label / name).read_bytes()
        assert ours == (fresh / TARGET.label / name).read_bytes(), name


@pytest.mark.fault("step-cache-missing-patch")
def test_an_entry_whose_report_links_a_missing_patch_is_never_stored_or_used(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ctxaudit import fix_patches

    steps = result_cache.StepCaches(True, result_cache.StepCache(tmp_path / "steps"))
    out = tmp_path / "out"
    folder = out / TARGET.label
    folder.mkdir(parents=True)
    link = fix_patches.write(out, "ledger", "L-1", "--- a\n+++ b\n")
    rep = a_report(fixes=[{"id": "L-1", "status": "fix verified", "patch": link}])
    key = steps.properties_key(TARGET, "ci", 1, ())
    (out / "ledger-fixes" / Path(link).name).unlink()  # gone (another audit pruned it)
    with fix_patches.staged(rep, folder):
        steps.store_properties(key, rep, out)
    err = capsys.readouterr().err
    assert "not cached" in err and link in err, err
    assert not list((tmp_path / "steps").rglob("*.json")), "a report with a dead link was cached"
    # stored whole, then a patch dropped from the entry (its digest made to match)
    fix_patches.write(out, "ledger", "L-1", "--- a\n+++ b\n")
    with fix_patches.staged(rep, folder):
        steps.store_properties(key, rep, out)
    path = the_entry(tmp_path / "steps")
    sealed(lambda d: d["files"].clear())(path, tmp_path)
    capsys.readouterr()
    assert steps.reuse_properties(key, TARGET, tmp_path / "elsewhere") is None
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and "links patches it does not hold" in lines[0], lines


@pytest.mark.fault("step-cache-unwritable")
def test_a_cache_that_cannot_be_written_costs_the_reuse_not_the_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "steps"
    store.write_text("a file where the cache folder should be")
    steps = result_cache.StepCaches(True, result_cache.StepCache(store))
    steps.store_properties(KEY, a_report(), tmp_path / "out")
    steps.store_mutation(KEY, 1, "mutation gate FAILS", TARGET, tmp_path / "out")
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2 and all("not cached" in ln for ln in lines), lines


@pytest.mark.fault("kill")
def test_a_staging_folder_of_a_killed_process_is_removed_by_the_next(tmp_path: Path) -> None:
    """A download or build killed mid-way (SIGKILL) leaves its staging folder in the cache;
    the next one in the same folder removes it, never one whose process still runs."""
    from ctxaudit import procs

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    left = tmp_path / f".tmp-p{dead.pid}-0.17.1-abc"
    (left / "tree").mkdir(parents=True)
    running = tmp_path / f".tmp-p{os.getppid()}-0.17.1-def"
    running.mkdir()
    with procs.staged(tmp_path, "0.17.1") as mine:
        assert mine.is_dir() and mine.name.startswith(f".tmp-p{os.getpid()}-0.17.1-")
    assert not left.exists() and running.is_dir() and not mine.exists()
