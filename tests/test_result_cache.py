"""The audit's step cache (ctxaudit/result_cache.py): a re-audit reuses a target
version's property phase and mutation run while nothing they read changed, and runs
them again when any part of the key changes."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxaudit import cli, environment, result_cache, targets
from ctxaudit.targets.base import BaseTarget, Described, Resolved

SUITE = """
import os, pytest

@pytest.mark.properties("T1")
def test_holds():
    with open(os.environ["TOY_RUNS"], "a") as f:
        f.write("run\\n")
    assert 1 + 1 == 2
"""


class Toy(BaseTarget):
    name = "toy-cached"
    properties = {"T1": "toy holds"}
    spec_forms = "'toy-cached'"

    def __init__(self, home: Path) -> None:
        self.home = home
        self.suites = (str(home / "test_toy.py"),)

    def claims(self, spec: str) -> bool:
        return spec == self.name

    def expand(self, spec: str, repo: Path | None = None) -> list[Described]:
        return [Described(self.name, spec, "1.0")]

    def resolve(self, spec: str | None = None, repo: Path | None = None) -> Resolved:
        return Resolved(self.name, "1.0", self.home / "code", self.name)


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Toy]:
    home = tmp_path / "toy"
    (home / "code").mkdir(parents=True)
    (home / "code" / "impl.py").write_text("X = 1\n")
    (home / "test_toy.py").write_text(textwrap.dedent(SUITE))
    monkeypatch.setenv("TOY_RUNS", str(tmp_path / "runs"))
    monkeypatch.setattr(result_cache, "CACHE_DIR", tmp_path / "cache")
    target = Toy(home)
    targets.register(target)
    yield target
    targets.unregister(target.name)


def audit(tmp_path: Path, *extra: str) -> int:
    argv = ["audit", "--target", "toy-cached", "--no-mutation", "--out", str(tmp_path / "out")]
    return cli.main([*argv, "--profile", "dev", *extra])


def runs(tmp_path: Path) -> int:
    p = tmp_path / "runs"
    return len(p.read_text().splitlines()) if p.exists() else 0


def test_a_second_audit_reuses_the_property_phase(
    toy: Toy, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert audit(tmp_path, "--seed", "3") == 0
    assert runs(tmp_path) == 1
    findings = tmp_path / "out/toy-cached-1.0/findings.md"
    first = findings.read_text()
    findings.unlink()  # reusing writes the reports again
    assert audit(tmp_path, "--seed", "3") == 0
    assert runs(tmp_path) == 1, "the suite ran again although nothing changed"
    assert findings.read_text() == first
    out = capsys.readouterr().out
    assert "properties of 1 target version(s) (ran 0)" in out
    assert "(reused)" in (tmp_path / "out/timing/audit-time.md").read_text()


@pytest.mark.parametrize(
    "change",
    ["target file", "suite", "seed", "profile", "fixes", "no-cache", "hypothesis", "PYTHONPATH"],
)
def test_every_part_of_the_key_invalidates(
    toy: Toy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    assert audit(tmp_path, "--seed", "3") == 0
    args = ["--seed", "3"]
    if change == "target file":
        (toy.home / "code" / "impl.py").write_text("X = 2\n")
    elif change == "suite":
        digest = result_cache.suite_digest()
        monkeypatch.setattr(result_cache, "suite_digest", lambda: digest + "x")
    elif change == "seed":
        args = ["--seed", "4"]
    elif change == "profile":
        args += ["--profile", "ci"]
    elif change == "fixes":
        monkeypatch.setenv("CTXAUDIT_FIXES", "0")
    elif change == "no-cache":
        args.append("--no-cache")
    elif change == "hypothesis":  # another Hypothesis imported (issue #47: 6.100.0)
        seen = {**environment.imported(), "hypothesis": "6.100.0"}
        monkeypatch.setattr(environment, "imported", lambda: seen)
    elif change == "PYTHONPATH":  # what the suite process imports may change
        (tmp_path / "first").mkdir()
        monkeypatch.setenv("PYTHONPATH", str(tmp_path / "first"))
    assert audit(tmp_path, *args) == 0
    assert runs(tmp_path) == 2, f"a changed {change} reused the old result"


def test_a_random_seed_is_never_reused(toy: Toy, tmp_path: Path) -> None:
    assert audit(tmp_path) == 0
    assert audit(tmp_path) == 0
    assert runs(tmp_path) == 2


def test_keys_differ_in_each_part() -> None:
    env = {"imported": {"hypothesis": "1"}, "variables": {}}
    base = dict(
        target_digest="t",
        suite_digest="s",
        profile="ci",
        seed=1,
        fixed_seeds=(),
        fixes=True,
        environment=env,
    )
    key = result_cache.properties_key(**base)  # type: ignore[arg-type]
    for part, other in [
        ("target_digest", "t2"),
        ("suite_digest", "s2"),
        ("profile", "thorough"),
        ("seed", 2),
        ("fixed_seeds", (5,)),
        ("fixes", False),
        ("environment", {"imported": {"hypothesis": "2"}, "variables": {}}),
        ("environment", {**env, "variables": {"PYTHONPATH": "/elsewhere"}}),
    ]:
        assert result_cache.properties_key(**{**base, part: other}) != key, part  # type: ignore[arg-type]
    assert result_cache.properties_key(**{**base, "profile": "thorough", "seed": None}) is None  # type: ignore[arg-type]
    mbase = dict(
        target_digest="t",
        suite_digest="s",
        other_sample=0.25,
        peer=True,
        findings="A",
        only=(),
        environment=env,
    )
    mkey = result_cache.mutation_key(**mbase)  # type: ignore[arg-type]
    for part, other in [
        ("target_digest", "t2"),
        ("suite_digest", "s2"),
        ("other_sample", 0.5),
        ("peer", False),
        ("findings", "A,B"),
        ("only", ("x:*",)),
        ("environment", {**env, "variables": {"PYTHONPATH": "/elsewhere"}}),
        ("fixes", ("GR-V2-UNLIMITED-COMPACTS",)),  # --mutate fixed
    ]:
        assert result_cache.mutation_key(**{**mbase, part: other}) != mkey, part  # type: ignore[arg-type]
    # the released tree's key has no "fixes" part (as before --mutate existed)
    assert mkey == result_cache.key_of(
        {"step": "mutation", "format": result_cache.FORMAT, "target": "t", "suite": "s",
         "other_sample": 0.25, "peer": True, "findings": "A", "only": [], "environment": env}
    )  # fmt: skip


def test_a_broken_or_foreign_entry_is_a_miss(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = result_cache.StepCache(tmp_path)
    store.put("ab" * 32, {"v": 1}, {"f": b"x"}, step="mutation")
    assert store.get("ab" * 32) == {
        "key": "ab" * 32, "step": "mutation", "value": {"v": 1}, "files": {"f": b"x"},
    }  # fmt: skip
    assert store.get("ab" * 32, "properties") is None  # another step's entry
    path = tmp_path / "ab" / f"{'ab' * 32}.json"
    path.write_bytes(path.read_bytes()[:10])
    assert store.get("ab" * 32) is None
    store.put("ef" * 32, {"v": 2}, {})
    foreign = tmp_path / "cd" / f"{'cd' * 32}.json"  # an entry under another key's name
    foreign.parent.mkdir()
    foreign.write_bytes((tmp_path / "ef" / f"{'ef' * 32}.json").read_bytes())
    assert store.get("cd" * 32) is None
    assert store.get(None) is None
    assert store.get("99" * 32) is None  # not stored: a silent miss
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 3, lines  # one line per invalid entry, naming its file
    assert all("step cache entry" in ln and "ignored" in ln for ln in lines)
    assert str(path) in lines[1] and str(foreign) in lines[2]


def test_entries_are_json_not_pickles(tmp_path: Path) -> None:
    store = result_cache.StepCache(tmp_path)
    store.put("ab" * 32, {"code": 0, "output": "gate passed"}, {"m.md": b"# m\n"}, "mutation")
    import json

    data = json.loads((tmp_path / "ab" / f"{'ab' * 32}.json").read_text())
    assert data["value"] == {"code": 0, "output": "gate passed"} and data["format"] == 2
    assert not list(tmp_path.rglob("*.pickle")) and not list(tmp_path.rglob("*.tmp"))


def test_a_property_report_survives_the_round_trip(tmp_path: Path) -> None:
    """The reused report is the stored one, rebuilt from JSON field by field (with its
    findings as Finding objects), not a pickle."""
    from ctxaudit.target_report import Finding, TargetReport

    report = TargetReport(
        target="toy", version="1.0", spec="toy", profile="ci", seed=3, elapsed_s=1.5,
        exit_status=1, verdicts={"T1": "fails"},
        findings=[Finding(["T1"], "T1: broke", "t.py::test", "repro", owners=["X-1"])],
        tests=[{"nodeid": "t.py::test", "properties": ["T1"], "outcome": "failed"}],
    )  # fmt: skip
    back = result_cache.report_from_json(result_cache.report_to_json(report))
    assert back == report and isinstance(back.findings[0], Finding)
    bad = result_cache.report_to_json(report)
    bad["elapsed_s"] = "abc"
    with pytest.raises(result_cache.InvalidEntry, match="elapsed_s"):
        result_cache.report_from_json(bad)


def test_the_ledgers_key_is_its_package_not_the_repository(tmp_path: Path) -> None:
    """The ledger's root is a repository that also holds the reports and caches the
    audit writes: only its ``ledger/`` package is the target's code (a re-audit once
    ran the ledger again because its key hashed the whole repository)."""
    import shutil

    root = Path(__file__).resolve().parents[1]
    copy = tmp_path / "repo"
    shutil.copytree(root / "ledger", copy / "ledger", ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "pyproject.toml").write_text((root / "pyproject.toml").read_text())
    target = Described("ledger", str(copy), "any")  # the ledger of a copy of the repository
    before = result_cache.target_digest(target)
    (copy / "reports").mkdir()
    (copy / "reports" / "findings.md").write_text("written by an audit\n")
    (copy / ".cache").mkdir()
    (copy / ".cache" / "verdict.json").write_text("{}\n")
    assert result_cache.target_digest(target) == before
    (copy / "ledger" / "__init__.py").write_text(
        (copy / "ledger" / "__init__.py").read_text() + "\n# changed\n"
    )
    assert result_cache.target_digest(target) != before


@pytest.mark.parametrize("mutate", ["released", "fixed"])
def test_mutate_fixed_mutates_the_fix_audits_tree(
    toy: Toy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mutate: str
) -> None:
    """``--mutate fixed`` hands the mutation run the fixes the fix audit applied to its
    fully fixed tree (and keys the step cache by them); the default mutates the released
    tree."""
    from ctxaudit import audit as audit_mod
    from ctxaudit.targets.base import MutationScope

    monkeypatch.setattr(Toy, "mutation", MutationScope("toy", "code"), raising=False)
    real = audit_mod.run_target

    def with_fix_audit(*args: object, **kw: object) -> audit_mod.TargetReport:
        report = real(*args, **kw)  # type: ignore[arg-type]
        report.fixed = {"applied": ["TOY-1", "TOY-2"]}
        return report

    calls: list[list[str]] = []

    def mutation(
        *args: object, options: audit_mod.MutationOptions, **kw: object
    ) -> tuple[int, str]:
        calls.append(list(options.fixes))
        return 0, "gate passed"

    monkeypatch.setattr(audit_mod, "run_target", with_fix_audit)
    monkeypatch.setattr(audit_mod, "run_mutation", mutation)
    argv = ["audit", "--target", "toy-cached", "--out", str(tmp_path / "out"), "--seed", "1"]
    assert cli.main([*argv, "--profile", "dev", "--mutation", "--mutate", mutate]) == 0
    assert calls == [["TOY-1", "TOY-2"] if mutate == "fixed" else []]


def test_a_report_says_what_its_suites_imported_and_its_rerun_runs_under_it(
    toy: Toy, tmp_path: Path
) -> None:
    """A report records the Python, Hypothesis and pytest its suite process imported and
    the import variables it ran with; when they are not what ctxaudit pins it says so,
    and its rerun command leads with the same variables (issue #47: a verdict made with
    another Hypothesis first on PYTHONPATH, whose printed rerun passed under the pinned
    one)."""
    from ctxaudit.audit import render_markdown, rerun_command
    from ctxaudit.target_report import TargetReport

    (tmp_path / "first").mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", str(tmp_path / "first"))
        assert audit(tmp_path, "--seed", "3") == 0
    data = json.loads((tmp_path / "out/toy-cached-1.0/findings.json").read_text())
    assert data["environment"] == {**environment.imported(), "PYTHONPATH": str(tmp_path / "first")}
    assert "Ran under python `" in (tmp_path / "out/toy-cached-1.0/findings.md").read_text()

    # a target that routes its suites itself (a library target's PYTHONPATH of its cached
    # environment) made that choice, not the user: the report records none of it (its
    # rerun takes the same route; the path is this machine's, never a committed report's)
    own = {**os.environ, "PYTHONPATH": str(tmp_path / "cache-env"), "PYTHONNOUSERSITE": "1"}
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("PYTHONPATH", raising=False)
        mp.delenv("PYTHONNOUSERSITE", raising=False)
        mp.setattr(Toy, "suite_process", lambda self, target, tmp: (sys.executable, own))
        assert audit(tmp_path, "--seed", "4") == 0
    data = json.loads((tmp_path / "out/toy-cached-1.0/findings.json").read_text())
    assert data["environment"] == environment.imported()
    assert "cache-env" not in (tmp_path / "out/toy-cached-1.0/findings.md").read_text()

    report = TargetReport("toy-cached", "1.0", "toy-cached", "dev", 3, 0.1, 1)
    report.environment = {"python": "3.11.7", "hypothesis": "6.100.0", "pytest": "9.2.0",
                          "PYTHONPATH": "/old hypothesis"}  # fmt: skip
    pins = environment.pinned()
    assert report.unpinned == [f"hypothesis 6.100.0 (ctxaudit pins {pins['hypothesis']})"]
    text = render_markdown(report)
    assert "**Not the versions ctxaudit pins:** hypothesis 6.100.0" in text
    assert rerun_command(report, "test_toy.py::test_holds").startswith(
        "PYTHONPATH='/old hypothesis' CTXAUDIT_PROFILE=dev bin/ctxaudit test "
    )


def test_the_console_line_says_a_run_was_made_with_other_test_libraries() -> None:
    from ctxaudit.pipeline.progress import summary
    from ctxaudit.target_report import TargetReport

    report = TargetReport("toy-cached", "1.0", "toy-cached", "dev", 3, 0.1, 0)
    assert "ran with" not in summary(report)
    report.environment = {"hypothesis": "6.100.0"}
    assert summary(report).endswith(" · ran with hypothesis 6.100.0 (ctxaudit pins "
                                    f"{environment.pinned()['hypothesis']})")  # fmt: skip


@pytest.mark.fault("cache-write-fails")
def test_a_step_that_cannot_be_cached_keeps_its_verdict(
    toy: Toy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Staging a version's files for the step cache fails (a full disk): the verdict
    stands, as the reports say it (never could-not-check beside a written report), and
    the run says in one line that the step was not cached."""
    from ctxaudit import fix_patches

    @contextlib.contextmanager
    def full_disk(report: object, version_dir: Path) -> Iterator[None]:
        raise OSError(errno.ENOSPC, "No space left on device", str(version_dir / "fixes"))
        yield

    monkeypatch.setattr(fix_patches, "staged", full_disk)
    assert audit(tmp_path, "--seed", "3") == 0
    out, err = capsys.readouterr()
    assert "COULD NOT CHECK" not in out
    said = [ln for ln in err.splitlines() if "not cached" in ln]
    assert said == [
        f"ctxaudit: step properties of toy-cached-1.0 not cached: "
        f"{tmp_path / 'out' / 'toy-cached-1.0' / 'fixes'} (No space left on device)"
    ]
    report = json.loads((tmp_path / "out" / "toy-cached-1.0" / "findings.json").read_text())
    assert report["verdicts"] == {"T1": "holds"}
    assert audit(tmp_path, "--seed", "3") == 0
    assert runs(tmp_path) == 2  # nothing was stored to reuse
