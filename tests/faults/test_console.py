"""The console never ends or changes a run, and what ctxaudit cannot write is one line
and exit 2 (``ctxaudit/console.py``; issue #47, section 2).

Each case runs the toy target's audit (``tests/faults/test_interrupt.py``) through the
command's own entry (``console.guarded``), in a shell that gives its standard output
the way a CI system or a user's pipe would.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.faults.test_interrupt import ROOT, SUITE


def _audit(tmp_path: Path, shell_tail: str, *args: str, **env: str) -> tuple[int, str, str]:
    """The toy's audit of version 1.0, run as ``<command> <shell_tail>`` in bash; its exit
    code (the command's, not the pipe's last), standard output and error."""
    home = tmp_path / "toy"
    home.mkdir(exist_ok=True)
    (home / "test_toy.py").write_text(textwrap.dedent(SUITE))
    cmd = [sys.executable, "-c", "from tests.faults.test_interrupt import drive; drive()"]
    cmd += [str(home), str(tmp_path / "steps"), "audit", "--no-mutation", "--profile", "ci"]
    cmd += ["--seed", "1", "--jobs", "1", "--target", "toy==1.0", *args]
    if "--out" not in args:
        cmd += ["--out", str(tmp_path / "reports")]
    script = f'{shlex.join(cmd)} {shell_tail}; echo "exit=${{PIPESTATUS[0]}}" >&2'
    full_env = {**os.environ, "CTXAUDIT_FIXES": "0", "TOY_HANG": "", **env}
    done = subprocess.run(
        ["bash", "-c", script], cwd=ROOT, env=full_env, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    lines = done.stderr.splitlines()
    code = int(lines[-1].removeprefix("exit="))
    return code, done.stdout, "\n".join(lines[:-1])


def _reports_written(tmp_path: Path) -> None:
    data = json.loads((tmp_path / "reports/toy-1.0/findings.json").read_text())
    assert data["verdicts"] == {"T1": "holds"}
    assert (tmp_path / "reports/matrix.md").is_file()


@pytest.mark.fault("stdout-closed")
def test_a_closed_standard_output_is_no_crash(tmp_path: Path) -> None:
    code, _, err = _audit(tmp_path, ">&-")
    assert code == 0, err
    assert "Traceback" not in err, err
    _reports_written(tmp_path)


@pytest.mark.fault("ascii-console")
def test_an_ascii_console_gets_escapes_not_a_failed_run(tmp_path: Path) -> None:
    code, out, err = _audit(tmp_path, "", PYTHONIOENCODING="ascii")
    assert code == 0, err
    assert "Traceback" not in err, err
    assert "toy-1.0: holds T1 \\xb7 new none" in out, out


@pytest.mark.fault("broken-pipe")
def test_a_reader_that_goes_away_does_not_stop_the_audit(tmp_path: Path) -> None:
    code, out, err = _audit(tmp_path, "| head -1")
    assert len(out.splitlines()) == 1
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    assert code == 0, err
    _reports_written(tmp_path)


@pytest.mark.fault("stdout-full")
def test_a_standard_output_that_cannot_be_written_is_one_line_and_exit_2(
    tmp_path: Path,
) -> None:
    code, _, err = _audit(tmp_path, ">/dev/full")
    assert code == 2, err
    assert "Traceback" not in err, err
    said = [ln for ln in err.splitlines() if "standard output" in ln]
    assert said == [
        "ctxaudit: could not write to standard output: No space left on device "
        "(the reports were written)"
    ], err
    _reports_written(tmp_path)


@pytest.mark.fault("report-is-a-folder")
@pytest.mark.parametrize("name", ["matrix.html", "matrix.md", "timing/audit-time.md"])
def test_a_report_that_cannot_be_written_is_one_line_and_exit_2(tmp_path: Path, name: str) -> None:
    (tmp_path / "reports" / name).mkdir(parents=True)  # a folder where the report goes
    code, _, err = _audit(tmp_path, "")
    assert code == 2, err
    assert "Traceback" not in err, err
    said = [ln for ln in err.splitlines() if ln.startswith("ctxaudit: could not write")]
    assert len(said) == 1 and name in said[0], err


@pytest.mark.fault("report-cannot-be-replaced")
@pytest.mark.parametrize("kind", ["a folder", "immutable"])
def test_a_version_report_that_cannot_be_replaced_leaves_no_verdict_of_this_run(
    tmp_path: Path, kind: str
) -> None:
    """The version's findings.md cannot be replaced: the console says so for that
    version (could not check, exit 2), and nothing in the report folder claims this
    run's verdict: no new findings.json beside the old findings.md, no leftovers."""
    version = tmp_path / "reports" / "toy-1.0"
    if kind == "a folder":
        (version / "findings.md").mkdir(parents=True)
    else:
        code, _, err = _audit(tmp_path, "")  # an earlier run's reports: holds
        assert code == 0, err
        made = subprocess.run(["chattr", "+i", str(version / "findings.md")],
                              capture_output=True, text=True, check=False)  # fmt: skip
        if made.returncode != 0:
            pytest.skip(f"files cannot be made immutable here: {made.stderr.strip()}")
    try:
        code, out, err = _audit(tmp_path, "", TOY_BREAK="1.0")  # this run: T1 fails
    finally:
        subprocess.run(["chattr", "-i", str(version / "findings.md")], capture_output=True,
                       check=False)  # fmt: skip
    assert code == 2, err
    assert "Traceback" not in err, err
    (line,) = [ln for ln in out.splitlines() if "toy-1.0:" in ln and "[1/1]" in ln]
    assert f"COULD NOT CHECK: could not write {version / 'findings.md'}" in line, line
    assert not (version / "findings.json").exists()  # the earlier one withdrawn with it
    assert "toy 1.0" not in (tmp_path / "reports" / "matrix.md").read_text()
    assert sorted(p.name for p in version.iterdir()) == ["findings.md"]  # no staging left


@pytest.mark.fault("foreign-fixes")
def test_another_versions_report_with_malformed_fixes_is_no_crash(tmp_path: Path) -> None:
    other = tmp_path / "reports" / "toy-0.9"
    other.mkdir(parents=True)
    report = {"target": "toy", "version": "0.9", "verdicts": {}, "fixes": [None]}
    (other / "findings.json").write_text(json.dumps(report))
    code, _, err = _audit(tmp_path, "")
    assert "Traceback" not in err, err
    assert code == 0, err
    _reports_written(tmp_path)


@pytest.mark.fault("hypothesis-does-not-import")
def test_a_test_library_that_does_not_import_is_one_line_and_exit_2(tmp_path: Path) -> None:
    broken = tmp_path / "first" / "hypothesis"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text('raise ImportError("broken on purpose")\n')
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "first")}
    done = subprocess.run(
        [sys.executable, "-P", "-m", "ctxaudit", "audit", "--target", "ledger"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "ctxaudit: cannot start: ImportError: broken on purpose (raised at "
        f"{broken / '__init__.py'}:1; is PYTHONPATH set?)"
    ]


@pytest.mark.fault("interrupt")
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_an_interrupt_of_any_command_is_one_line_and_exit_130(sig: str) -> None:
    """Commands other than the audit (which stops its children itself) under the
    console's rules: SIGTERM interrupts like Ctrl-C, one line, exit 130 (not 143)."""
    code = (
        "import os, signal, time\n"
        "from ctxaudit import console\n"
        "def command():\n"
        f"    os.kill(os.getpid(), signal.{sig})\n"
        "    time.sleep(30)\n"
        "    return 0\n"
        "raise SystemExit(console.guarded(command))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 130, done.stderr
    assert done.stderr.splitlines() == ["ctxaudit: interrupted"]
