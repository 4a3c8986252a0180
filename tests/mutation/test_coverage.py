"""Branch coverage beside the mutation score counts what the suite reaches in its child
processes too: a new interpreter (``subprocess``) and a fork that ends in ``os._exit``,
as the gitreins config tests run gitreins (``ctxaudit/targets/gitreins/config.py``)."""

from __future__ import annotations

import dataclasses
import textwrap
import time
from pathlib import Path

from mutation import engine, suite_coverage
from mutation.config import TargetConfig

TOY = """
def in_subprocess(n):
    if n > 2:
        return "big"
    return "small"


def in_fork(n):
    total = 0
    for i in range(n):
        total += i
    return total


def never(n):
    if n:
        return 1
    return 0
"""

# the toy's code runs only in children: never in the pytest process itself
TESTS = """
import os
import subprocess
import sys


def test_subprocess():
    out = subprocess.run(
        [sys.executable, "-c", "from toypkg.work import in_subprocess; print(in_subprocess(3))"],
        capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": ROOT},
    )
    assert out.stdout.strip() == "big"


def test_fork():
    pid = os.fork()
    if pid == 0:
        sys.path.insert(0, ROOT)
        from toypkg.work import in_fork
        os._exit(0 if in_fork(4) == 6 else 1)
    _pid, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
"""


def toy(tmp_path: Path, tests_text: str) -> tuple[engine.Plan, TargetConfig, Path]:
    root = tmp_path / "src"
    (root / "toypkg").mkdir(parents=True)
    (root / "toypkg" / "__init__.py").write_text("")
    (root / "toypkg" / "work.py").write_text(textwrap.dedent(TOY))
    tests = tmp_path / "toytests"
    tests.mkdir()
    (tests / "test_children.py").write_text(f"ROOT = {str(root)!r}\n" + tests_text)
    cfg = TargetConfig(
        name="toy",
        package="toypkg",
        tests=(str(tests),),
        pytest_args=("-p", "no:hypothesispytest"),
        files=(("toypkg/*.py", ("*",)),),
    )
    (tmp_path / "none.toml").write_text("")
    plan = engine.build_plan("toy", cfg, root, "0", catalogue_path=tmp_path / "none.toml")
    return plan, cfg, root


def test_coverage_follows_subprocesses_and_forks(tmp_path: Path):
    plan, cfg, root = toy(tmp_path, TESTS)
    cov = suite_coverage.branch_coverage(plan, cfg, str(root), tmp_path / "work")
    assert cov is not None and "error" not in cov, cov
    assert cov["tests_exit"] == 0
    assert cov["processes"] >= 3  # pytest, the subprocess, the fork
    got = cov["files"]["toypkg/work.py"]
    # the spans count the `def` lines (run at import, in the children): in_subprocess
    # 4 statements, 3 run (not `return "small"`); in_fork 5, all run; never 4, its def only
    assert (got["statements"], got["covered_statements"]) == (13, 9), got
    # in_subprocess's `if` went one way, in_fork's loop both, never's `if` neither
    assert (got["branches"], got["covered_branches"]) == (6, 3), got


def test_a_suite_too_slow_under_coverage_is_not_measured_with_the_reason(tmp_path: Path):
    slow = "import subprocess, time\n\ndef test_slow():\n"
    slow += "    subprocess.Popen(['sleep', '60'])\n    time.sleep(60)\n"
    plan, cfg, root = toy(tmp_path, slow)
    # no capture: the test's child holds the suite's own output, as a service it starts would
    cfg = dataclasses.replace(cfg, pytest_args=(*cfg.pytest_args, "-s"))
    t0 = time.monotonic()
    cov = suite_coverage.branch_coverage(plan, cfg, str(root), tmp_path / "work", timeout=3)
    assert cov == {
        "error": "the suite under coverage.py did not finish within 3 s (stopped there: "
        "coverage's tracer slows it down that much)"
    }
    assert time.monotonic() - t0 < 30  # stopped, with its child, not waited for
