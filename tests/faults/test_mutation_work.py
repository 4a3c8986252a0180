"""An interrupted mutation run removes its work copy; one a killed run left behind is
removed by the next run's start.

The run (``python -m mutation run`` on a few of the ledger's mutants) works in a folder
of the test's (a ``sitecustomize`` on its PYTHONPATH points ``mutation.engine.WORK``
there) and its worker, once started, writes a marker and sleeps: the test signals the
run once the marker is on disk, never after a guessed delay. Before it starts, the
folder holds three leftovers: a dead run's (removed at the start), a live process's
(kept: it may be running) and a dead run's that it kept on purpose (kept: evidence).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

SITE = """
import os, sys, time

if sys.orig_argv[1:3] == ["-m", "mutation"]:
    from pathlib import Path
    import mutation.engine

    mutation.engine.WORK = Path(os.environ["FAULT_WORK"])
elif "mutation.worker" in sys.orig_argv:  # the worker: started, then hangs
    with open(os.environ["FAULT_MARKER"] + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.replace(os.environ["FAULT_MARKER"] + ".tmp", os.environ["FAULT_MARKER"])
    time.sleep(300)
"""


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


@pytest.mark.fault("interrupted-mutation-work")
@pytest.mark.parametrize(
    ("sig", "group"), [(signal.SIGINT, True), (signal.SIGTERM, False)],
    ids=["SIGINT-group", "SIGTERM"],
)  # fmt: skip
def test_an_interrupted_mutation_run_removes_its_work_copy(
    tmp_path: Path, sig: int, group: bool
) -> None:
    site, work, marker = tmp_path / "site", tmp_path / "work", tmp_path / "started"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITE)
    stale = work / f"ledger-0.1.0-1of1.{dead_pid()}"
    live = work / f"ledger-0.1.0-1of1.{os.getpid()}"
    kept = work / f"ledger-fixed-1of1.{dead_pid()}"
    for folder in (stale, live, kept):
        (folder / "tree").mkdir(parents=True)
    (kept / "KEPT").write_text("the run failed\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)]),
           "FAULT_WORK": str(work), "FAULT_MARKER": str(marker)}  # fmt: skip
    args = ["--target", "ledger", "--only", "ledger/owner.py:*", "--no-coverage", "--seeds", "1"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "mutation", "run", *args, "--no-cache", "-q",
         "--out", str(tmp_path / "out")],
        cwd=REPO, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    try:
        end = time.monotonic() + 120
        while not marker.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < end, "the worker did not start within 120 s"
            time.sleep(0.05)
        assert not stale.exists(), "a dead run's work folder was left at the start"
        mine = [p for p in work.iterdir() if p.name.endswith(f".{proc.pid}")]
        assert mine, "the run has no work folder"
        if group:  # Ctrl-C, or the audit stopping the run's group
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        with_worker = [int(marker.read_text())] if marker.exists() else []
        for pid in with_worker:  # a worker left sleeping by a signal to the run alone
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 130, (proc.returncode, err[-2000:])
    assert "interrupted" in err and "Traceback" not in err, err[-2000:]
    assert sorted(p.name for p in work.iterdir()) == sorted([live.name, kept.name])
