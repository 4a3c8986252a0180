"""The audit command's usage errors: one clear line on stderr and exit code 2."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.faults.test_interrupt import Run, toy_audits

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def audit_toy(tmp_path: Path) -> Iterator[Callable[..., Run]]:
    """An audit of the toy target (tests/faults/test_interrupt.py), in its own process."""
    with toy_audits(tmp_path) as start:
        yield start


def audit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctxaudit", "audit", "--no-mutation", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--target", "gitreins==9.9.9"], "no published version '9.9.9'"),
        (["--target", "/no/such/tree"], "no such path '/no/such/tree'"),
        (["--target", "gitreinz==0.14.0"], "target 'gitreinz==0.14.0'"),
        (["--target", "gitreins==abc"], "'abc' is not a version number"),
        (
            ["--target", str(ROOT)],
            "no registered target (gitreins, lightspeed-stack, langchain, openai-agents, "
            "pydantic-ai, google-adk, strands-agents, ledger) claims this path; "
            "as a gitreins tree: ",
        ),
        (["--target", "gitreins>=99"], "no published gitreins version matches"),
        (["--profile", "fast"], "invalid choice: 'fast'"),
        (["--jobs", "0"], "--jobs must be at least 1"),
        (["--other-sample", "1.5"], "--other-sample must be in (0, 1]"),
        (["--mutate", "fixed", "--no-fixes"], "--mutate fixed mutates the fix audit's"),
        (["--mutate", "fixed", "--since", "HEAD"], "not with --no-fixes (or --since"),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(args: list[str], says: str) -> None:
    proc = audit(*args)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


def _git_repo(path: Path) -> Path:
    """A tiny git repository (not lightspeed-stack) with one commit and tag 0.1.0."""
    path.mkdir()
    for cmd in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty",
         "-m", "first"],
        ["git", "tag", "0.1.0"],
    ):  # fmt: skip
        subprocess.run(cmd, cwd=path, check=True, capture_output=True)
    return path


@pytest.mark.parametrize(
    ("target", "repo", "says"),
    [
        ("lightspeed-stack==0.6.2", None, "--lightspeed-repo=PATH"),
        ("lightspeed-stack==0.6.2", "missing", "does not exist"),
        ("lightspeed-stack==9.9.9", "git", "no tag '9.9.9'"),
        ("lightspeed-stack@deadbeef", "git", "no commit, branch or tag 'deadbeef'"),
        ("lightspeed-stack==0.1.0", "git", "is not a lightspeed-stack tree"),
        ("lightspeed-stack>=5.0", "git", "no tag in"),
    ],
)
def test_lightspeed_target_errors_are_one_line_and_exit_2(
    target: str, repo: str | None, says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CTXAUDIT_LIGHTSPEED_REPO", raising=False)
    monkeypatch.setenv("CTXAUDIT_CACHE", str(tmp_path / "cache"))
    args = ["--target", target]
    if repo == "missing":
        args += ["--lightspeed-repo", str(tmp_path / "nowhere")]
    elif repo == "git":
        args += ["--lightspeed-repo", str(_git_repo(tmp_path / "repo"))]
    proc = audit(*args)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], proc.stderr


# -- checked before anything runs -------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--seed", "-1"], "'-1' is not a seed"),
        (["--seed", "1_0"], "'1_0' is not a seed"),
        (["--seed", " 7"], "' 7' is not a seed"),
        (["--seed", "+7"], "'+7' is not a seed"),
        (["--seed", "٣"], "is not a seed"),
        (["--seed", "1", "--seed", "x"], "'x' is not a seed"),
        (["--target", "gitreins>=banana"], "target 'gitreins>=banana'"),
        (["--target", "lightspeed-stack>="], "'lightspeed-stack>=' is not a spec"),
        (["--target", "gitreins>=99.0"], "no published gitreins version matches"),
    ],
)
def test_bad_seeds_and_ranges_are_one_line_and_exit_2(args: list[str], says: str) -> None:
    # an unknown version after them: the old parser, which took these seeds, stops there
    proc = audit(*args, "--target", "gitreins==9.9.9")
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_attribute_takes_the_same_seeds() -> None:
    from ctxaudit import cli

    assert cli.parse_seed("0") == 0 and cli.parse_seed("4294967296") == 2**32
    proc = subprocess.run(
        [sys.executable, "-m", "ctxaudit", "attribute", "x", "--target", "gitreins==9.9.9",
         "--fix", "F", "--seed", "-3"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 2 and "'-3' is not a seed" in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def _unwritable(tmp_path: Path) -> Path:
    """A folder this process cannot create files in (root ignores modes: /proc/sys)."""
    if os.geteuid() == 0:
        return Path("/proc/sys")
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    return folder


@pytest.mark.fault("bad-out")
@pytest.mark.parametrize(
    ("kind", "option"),
    [("a file", "--out"), ("under a file", "--out"), ("not writable", "--out"),
     ("a name too long", "--out"), ("a name too long", "--junit-xml")],
)  # fmt: skip
def test_a_bad_out_is_refused_before_anything_runs(
    audit_toy: Callable[..., Run], kind: str, option: str, tmp_path: Path
) -> None:
    file = tmp_path / "file"
    file.write_text("not a folder\n")
    out = {"a file": file, "under a file": file / "reports",
           "not writable": _unwritable(tmp_path),
           "a name too long": tmp_path / ("x" * 300)}[kind]  # fmt: skip
    path = out if option == "--out" else out / "junit.xml"
    run = audit_toy("1.0", args=(option, str(path)))
    code, stdout, stderr = run.finish(within=120)
    assert code == 2, f"{stdout}\n{stderr}"
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and f"{option} {path}" in lines[0], stderr
    assert "Traceback" not in stderr and "could not write" not in stderr, stderr
    assert "target version(s)" not in stdout  # nothing ran
    assert not (tmp_path / "steps").exists()


def test_targets_naming_one_version_run_once_in_first_given_order(
    audit_toy: Callable[..., Run],
) -> None:
    run = audit_toy("2.0", "1.0", "2.0", "1.0")
    code, out, err = run.finish(within=180)
    assert code == 0, f"{out}\n{err}"
    assert "2 target version(s)" in out
    heads = [ln.split(":")[0] for ln in out.splitlines() if ln.startswith("[")]
    assert heads == ["[1/2] toy-2.0", "[2/2] toy-1.0"], out


def test_the_pinned_gitreins_and_its_version_are_one_target() -> None:
    from ctxaudit import pipeline, targets

    (pinned,) = targets.parse("gitreins")
    again = targets.parse(f"gitreins=={pinned.version}")
    assert pipeline.unique([pinned, *again, pinned]) == [pinned]


# -- the third outcome ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "code", "says", "never"),
    [
        ({}, 0, ["[1/2] toy-1.0: properties hold", "[2/2] toy-2.0: properties hold"], []),
        ({"TOY_BREAK": "2.0"}, 1, ["[2/2] toy-2.0: FAILS T1"], ["COULD NOT CHECK"]),
        ({"TOY_BROKEN": "2.0"}, 2,
         ["[2/2] toy-2.0: COULD NOT CHECK: the suite did not run (pytest exit 2): "
          "RuntimeError: the toy harness is broken (raised at "],
         ["FAILS", "error during collection"]),
        ({"TOY_MISSING": "2.0"}, 2,
         ["[2/2] toy-2.0: COULD NOT CHECK: the suite did not run (pytest exit 2): "
          "ModuleNotFoundError: No module named 'toy_runtime_not_installed' (raised at "],
         ["FAILS", "error during collection"]),
        ({"TOY_BREAK": "1.0", "TOY_BROKEN": "2.0"}, 2,
         ["[1/2] toy-1.0: FAILS T1", "[2/2] toy-2.0: COULD NOT CHECK:"], ["suite error"]),
    ],
    ids=["holds", "fails", "could-not-check", "not-installed", "fails-and-could-not-check"],
)  # fmt: skip
def test_the_line_and_exit_code_of_each_outcome(
    audit_toy: Callable[..., Run], env: dict[str, str], code: int, says: list[str], never: list[str]
) -> None:
    run = audit_toy("1.0", "2.0", **env)
    got, out, err = run.finish(within=180)
    assert got == code, f"{out}\n{err}"
    for text in says:
        assert text in out, out
    for text in never:
        assert text not in out, out
    matrix = (run.out / "matrix.md").read_text()
    if "TOY_BROKEN" in env or "TOY_MISSING" in env:
        assert "could not check" in matrix and "COULD NOT CHECK: the suite did not run" in matrix
        cause = "RuntimeError" if "TOY_BROKEN" in env else "ModuleNotFoundError"
        assert cause in (run.out / "toy-2.0" / "findings.md").read_text()


def test_a_mutation_run_that_could_not_run_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ctxaudit import audit as the_audit
    from ctxaudit import cli, result_cache, targets
    from ctxaudit.targets.base import MutationScope
    from tests.faults.test_interrupt import SUITE, Toy

    home = tmp_path / "toy"
    home.mkdir()
    (home / "test_toy.py").write_text(SUITE)
    toy = Toy(home)
    toy.mutation = MutationScope("toy", "toy")  # type: ignore[misc]
    targets.register(toy)
    monkeypatch.setattr(result_cache, "CACHE_DIR", tmp_path / "steps")
    codes = iter([3, 1])
    monkeypatch.setattr(
        the_audit, "run_mutation", lambda *a, **k: (next(codes), "mutation: its own error\n")
    )
    try:
        argv = [
            "audit",
            "--target",
            "toy==1.0",
            "--target",
            "toy==2.0",
            "--profile",
            "ci",
            "--mutation",
        ]
        got = cli.main([*argv, "--seed", "1", "--out", str(tmp_path / "r"), "--no-peer"])
    finally:
        targets.unregister("toy")
    out = capsys.readouterr().out
    assert "toy-1.0: COULD NOT CHECK: mutation could not run (exit 3)" in out, out
    assert "toy-2.0: mutation gate FAILS" in out
    assert got == 2


@pytest.mark.parametrize("text", ["-1", "1_0", " 1", "x", "١"])
def test_every_entry_point_refuses_the_same_bad_seeds(text: str) -> None:
    """ctxaudit audit, ctxaudit attribute and python -m mutation run read --seed with
    one parser: each refuses the same text in one line, exit 2."""
    import mutation.__main__ as mutation_main
    from ctxaudit import cli

    for run in (
        lambda: cli.main(["audit", f"--seed={text}"]),
        lambda: cli.main(
            ["attribute", "X", "--target", "gitreins", "--fix", "Y", f"--seed={text}"]
        ),
        lambda: mutation_main.main(["run", "--target", "ledger", f"--seed={text}"]),
    ):
        with pytest.raises(SystemExit) as exc:
            run()
        assert exc.value.code == 2


# -- what is checked before any work, and what a run says it used ----------------------


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--junit-xml", "/proc/ctxaudit-junit.xml"), "--junit-xml /proc/ctxaudit-junit.xml"),
        (("--sarif", "/proc/ctxaudit.sarif"), "--sarif /proc/ctxaudit.sarif"),
        (("--target", ""), "--target '': an empty spec names no target"),
        (("--target", "  "), "--target '  ': an empty spec names no target"),
    ],
    ids=["junit-xml", "sarif", "empty-target", "blank-target"],
)
def test_bad_report_files_and_empty_targets_are_refused_before_anything_runs(
    audit_toy: Callable[..., Run], args: tuple[str, ...], says: str, tmp_path: Path
) -> None:
    run = audit_toy("1.0", args=args)
    code, stdout, stderr = run.finish(within=120)
    assert code == 2, f"{stdout}\n{stderr}"
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], stderr
    assert "target version(s)" not in stdout  # nothing ran
    assert not (tmp_path / "steps").exists()


def test_a_baseline_that_cannot_be_written_is_refused_before_the_audit(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ctxaudit", "baseline", "--target", "ledger",
         "--out", "/proc/ctxaudit-baseline.toml"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "--out /proc/ctxaudit-baseline.toml" in lines[0], proc.stderr
    assert "target version(s)" not in proc.stdout  # the audit never started


def test_attribute_refuses_an_empty_target() -> None:
    from ctxaudit import cli

    with pytest.raises(SystemExit) as exc:
        cli.main(["attribute", "X", "--target", "", "--fix", "Y"])
    assert exc.value.code == 2


def test_a_run_under_a_derandomized_profile_prints_and_records_its_seed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No --seed under ``ci``: the seed it draws its examples under (0, the profile's
    derandomized examples) is printed and in the report, never None."""
    import json

    from ctxaudit import cli, result_cache, targets
    from tests.faults.test_interrupt import SUITE, Toy

    home = tmp_path / "toy"
    home.mkdir()
    (home / "test_toy.py").write_text(SUITE)
    targets.register(Toy(home))
    monkeypatch.setattr(result_cache, "CACHE_DIR", tmp_path / "steps")
    monkeypatch.setenv("CTXAUDIT_FIXES", "0")
    try:
        got = cli.main(["audit", "--target", "toy==1.0", "--profile", "ci", "--no-mutation",
                        "--out", str(tmp_path / "r")])  # fmt: skip
    finally:
        targets.unregister("toy")
    out = capsys.readouterr().out
    assert got == 0, out
    assert "profile ci, seed 0 (profile ci is derandomized)" in out, out
    report = json.loads((tmp_path / "r" / "toy-1.0" / "findings.json").read_text())
    assert report["seed"] == 0
    assert "seed `0`" in (tmp_path / "r" / "toy-1.0" / "findings.md").read_text()


# -- the commands a report prints, where it prints them ---------------------------------


def test_printed_commands_name_the_installed_entry_point_when_installed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ctxaudit import paths, replay

    rerun = "CTXAUDIT_FINDINGS=none CTXAUDIT_PROFILE=ci bin/ctxaudit test 'tests/x.py::t' --s=1"
    mutant = "python -m mutation run --target ledger --only 'm' --seed 0"
    assert replay.printed(rerun) == rerun
    assert replay.printed(mutant) == "bin/ctxaudit mutation run --target ledger --only 'm' --seed 0"
    monkeypatch.setattr(paths, "IN_CHECKOUT", False)
    assert replay.printed(rerun) == (
        "CTXAUDIT_FINDINGS=none CTXAUDIT_PROFILE=ci ctxaudit test 'tests/x.py::t' --s=1"
    )
    assert replay.printed(mutant) == "ctxaudit mutation run --target ledger --only 'm' --seed 0"
    assert replay.printed("pytest x") == "pytest x"


@pytest.mark.parametrize(
    ("words", "says"),
    [
        (["test", "--co", "-q", "tests/test_junit.py"], "tests/test_junit.py::"),
        (["mutation", "run", "--help"], "mutation run [-h] --target"),
    ],
    ids=["test", "mutation"],
)
def test_test_and_mutation_run_from_any_folder(tmp_path: Path, words: list[str], says: str) -> None:
    """``ctxaudit test`` and ``ctxaudit mutation`` run where the test paths a report
    prints are (the root of ctxaudit's files), whatever the current folder."""
    proc = subprocess.run(
        [sys.executable, "-m", "ctxaudit", *words],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert says in proc.stdout, proc.stdout[-2000:]
