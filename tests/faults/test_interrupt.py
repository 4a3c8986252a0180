"""An interrupted audit stops cleanly: SIGINT or SIGTERM (to the audit or to its process
group) at several points, and SIGKILL of the audit.

Each test runs ``ctxaudit audit`` in a process of its own (in a session of its own, so a
signal to its group reaches nothing else) against a toy target whose suite takes no
time, except where a test makes one version hang: that version's test writes a marker
file (its pid and its child's) and sleeps. The tests signal the audit once the marker
(or the audit's own ``CTXAUDIT_PAUSE_AT`` marker, ``ctxaudit/procs.py``) is on disk,
never after a guessed delay.

What must hold after SIGINT or SIGTERM: exit 130; the reports of the versions that
finished are there, the interrupted version has no findings.json or findings.md and no
step-cache entry; the matrix lists what finished; no ``ctxaudit-*`` temporary folder is
left; no process the audit started is still running. After SIGKILL: no process the
audit started is running a few seconds later.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ctxaudit import targets
from ctxaudit.targets import uvenv
from ctxaudit.targets.base import BaseTarget, Described, Resolved

ROOT = Path(__file__).resolve().parents[2]

# --------------------------------------------------------------------------- the toy


class Toy(BaseTarget):
    """A toy target: T1 holds on every version; the version named by ``TOY_HANG``
    writes ``TOY_MARKER`` and sleeps (with a child of its own) instead of finishing."""

    name = "toy"
    properties = {"T1": "toy holds"}
    spec_forms = "'toy==X'"

    def __init__(self, home: Path) -> None:
        self.home = home
        self.suites = (str(home / "test_toy.py"),)

    def claims(self, spec: str) -> bool:
        return spec.startswith("toy")

    def expand(self, spec: str, repo: Path | None = None) -> list[Described]:
        return [Described(self.name, spec, self.resolve(spec).version)]

    def resolve(self, spec: str | None = None, repo: Path | None = None) -> Resolved:
        version = (spec or "").partition("==")[2] or "1.0"
        if os.environ.get("TOY_RESOLVE_HANG") == version:  # a download that takes its time
            uvenv.run([sys.executable, "-c", DOWNLOAD, os.environ["TOY_MARKER"]])
        return Resolved(self.name, version, self.home, f"toy=={version}", copy_dir="toy")

    def suite_process(self, target: Described, tmp: Path) -> tuple[str, dict[str, str]]:
        return sys.executable, {**os.environ, "TOY_VERSION": target.version}


#: a download as pip does it: a child of its own (a build backend) and a partial file
#: in a staging folder of the cache; the marker holds both pids once they run
DOWNLOAD = """
import json, os, subprocess, sys, time
kid = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
marker = sys.argv[1]
with open(marker + ".tmp", "w") as f:
    json.dump({"pids": [os.getpid(), kid.pid]}, f)
os.replace(marker + ".tmp", marker)
time.sleep(300)
"""

SUITE = """
import json, os, subprocess, sys, time
import pytest

if os.environ.get("TOY_BROKEN") == os.environ["TOY_VERSION"]:  # the suite does not run
    raise RuntimeError("the toy harness is broken")
if os.environ.get("TOY_MISSING") == os.environ["TOY_VERSION"]:  # a runtime not installed
    import toy_runtime_not_installed


@pytest.mark.properties("T1")
def test_breaks_when_asked():
    assert os.environ.get("TOY_BREAK") != os.environ["TOY_VERSION"], "T1: the toy breaks"

@pytest.mark.properties("T1")
def test_holds():
    if os.environ.get("TOY_HANG") == os.environ["TOY_VERSION"]:
        kid = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
        marker = os.environ["TOY_MARKER"]
        with open(marker + ".tmp", "w") as f:
            json.dump({"pids": [os.getpid(), kid.pid]}, f)
        os.replace(marker + ".tmp", marker)
        time.sleep(300)
    assert 1 + 1 == 2
"""


def drive() -> None:
    """The audit's command line with the toy registered (``python -c``: argv[1] is the
    toy's home, argv[2] the step-cache folder, the rest ``ctxaudit`` arguments)."""
    from ctxaudit import cli, console, result_cache

    targets.register(Toy(Path(sys.argv[1])))
    result_cache.CACHE_DIR = Path(sys.argv[2])
    raise SystemExit(console.guarded(lambda: cli.main(sys.argv[3:])))


@dataclass
class Run:
    tmp: Path  # the audit's TMPDIR: its temporary folders go here
    out: Path
    steps: Path
    marker: Path  # the hanging test's
    pause: Path  # the audit's CTXAUDIT_PAUSE_AT marker
    proc: subprocess.Popen[str]

    def wait_for(self, path: Path, within: float = 120.0) -> None:
        """Until ``path`` exists (the audit is then where the test wants it)."""
        end = time.monotonic() + within
        while not path.exists():
            if self.proc.poll() is not None:
                out, err = self.proc.communicate()
                pytest.fail(f"the audit ended ({self.proc.returncode}) first:\n{out}\n{err}")
            if time.monotonic() > end:
                pytest.fail(f"{path.name} did not appear within {within:.0f} s")
            time.sleep(0.05)

    def finish(self, within: float = 60.0) -> tuple[int, str, str]:
        try:
            out, err = self.proc.communicate(timeout=within)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            out, err = self.proc.communicate()
            pytest.fail(f"the audit did not stop within {within:.0f} s:\n{out}\n{err}")
        return self.proc.returncode, out, err

    def signal(self, sig: int, group: bool = False) -> None:
        if group:
            os.killpg(self.proc.pid, sig)
        else:
            self.proc.send_signal(sig)

    def hung_pids(self) -> list[int]:
        return list(json.loads(self.marker.read_text())["pids"])

    def cached_versions(self) -> list[str]:
        """The toy versions the step cache holds an entry for."""
        found = []
        for entry in self.steps.rglob("*.json"):
            value = json.loads(entry.read_text()).get("value") or {}
            found.append(str(value.get("version")))
        return sorted(found)

    def leftovers(self) -> list[str]:
        return sorted(p.name for p in self.tmp.iterdir() if p.name.startswith("ctxaudit-"))


def processes_with(text: str) -> list[int]:
    """Live (not zombie) processes whose environment mentions ``text``: every process
    the audit starts inherits its TMPDIR (under the test's folder)."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            if f" {'Z'} " in (d / "stat").read_text().rpartition(")")[2][:3]:
                continue
            if text.encode() in (d / "environ").read_bytes():
                found.append(int(d.name))
        except OSError:
            continue
    return found


def gone_within(pids_of: object, within: float) -> list[int]:
    """Poll until nothing is left (a bound, not a verdict: what is left is the answer)."""
    end = time.monotonic() + within
    while True:
        left = pids_of()  # type: ignore[operator]
        if not left or time.monotonic() > end:
            return list(left)
        time.sleep(0.1)


@contextlib.contextmanager
def toy_audits(tmp_path: Path) -> Iterator[Callable[..., Run]]:
    """``start(*versions, hang=, pause=, args=, **env)``: an audit of the toy's versions,
    running; whatever is still running at the end is killed."""
    started: list[Run] = []

    def start(*versions: str, hang: str = "", pause: str = "", args: tuple[str, ...] = (),
              **more: str) -> Run:  # fmt: skip
        home = tmp_path / "toy"
        home.mkdir(exist_ok=True)
        (home / "test_toy.py").write_text(textwrap.dedent(SUITE))
        run_tmp = tmp_path / "tmp"
        run_tmp.mkdir(exist_ok=True)
        run = Run(run_tmp, tmp_path / "reports", tmp_path / "steps", tmp_path / "hung",
                  tmp_path / "paused", None)  # type: ignore[arg-type]  # fmt: skip
        env = {
            **os.environ,
            "TMPDIR": str(run_tmp),
            "TOY_HANG": hang,
            "TOY_MARKER": str(run.marker),
            "CTXAUDIT_PAUSE_AT": pause,
            "CTXAUDIT_PAUSE_MARKER": str(run.pause),
            "CTXAUDIT_FIXES": "0",
            **more,
        }
        cmd = [sys.executable, "-c", "from tests.faults.test_interrupt import drive; drive()"]
        cmd += [str(home), str(run.steps), "audit", "--no-mutation", "--profile", "ci"]
        cmd += ["--seed", "1", "--jobs", "1", *args]
        if "--out" not in args:
            cmd += ["--out", str(run.out)]
        for v in versions:
            cmd += ["--target", f"toy=={v}"]
        run.proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True,
        )  # fmt: skip
        started.append(run)
        return run

    try:
        yield start
    finally:
        for run in started:  # a failed test leaves nothing running
            if run.proc.poll() is None:
                os.killpg(run.proc.pid, signal.SIGKILL)
                run.proc.communicate()


@pytest.fixture
def audit(tmp_path: Path) -> Iterator[Callable[..., Run]]:
    with toy_audits(tmp_path) as start:
        yield start


def assert_stopped_cleanly(run: Run, code: int, out: str, err: str, finished: list[str],
                           interrupted: str | None) -> None:  # fmt: skip
    assert code == 130, f"exit {code}\n{out}\n{err}"
    assert "Traceback" not in err, err
    for v in finished:
        data = json.loads((run.out / f"toy-{v}" / "findings.json").read_text())
        assert data["verdicts"] == {"T1": "holds"}
    if interrupted is not None:
        folder = run.out / f"toy-{interrupted}"
        assert not (folder / "findings.json").exists() and not (folder / "findings.md").exists()
    assert run.cached_versions() == sorted(finished)
    matrix = (run.out / "matrix.md").read_text()
    html = (run.out / "matrix.html").read_text()
    assert html.rstrip().endswith("</html>")
    for v in finished:
        assert f"### toy {v}:" in matrix and f"toy {v}" in html
    if interrupted is not None:
        assert f"toy {interrupted}" not in matrix and f"toy {interrupted}" not in html
    assert run.leftovers() == []
    assert gone_within(lambda: processes_with(str(run.tmp)), 5.0) == []


@pytest.mark.fault("interrupt")
@pytest.mark.parametrize(
    ("sig", "group"),
    [(signal.SIGINT, False), (signal.SIGTERM, False), (signal.SIGINT, True),
     (signal.SIGTERM, True)],
    ids=["SIGINT", "SIGTERM", "SIGINT-group", "SIGTERM-group"],
)  # fmt: skip
def test_interrupt_during_a_property_suite(
    audit: Callable[..., Run], sig: int, group: bool
) -> None:
    run = audit("1.0", "2.0", hang="2.0")
    run.wait_for(run.marker)
    pids = run.hung_pids()
    run.signal(sig, group)
    code, out, err = run.finish()
    assert gone_within(lambda: [p for p in pids if p in processes_with(str(run.tmp))], 5) == []
    assert_stopped_cleanly(run, code, out, err, finished=["1.0"], interrupted="2.0")
    assert "interrupted" in err and "FAILS" not in out


@pytest.mark.fault("interrupt")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupt_between_versions(audit: Callable[..., Run], sig: int) -> None:
    run = audit("1.0", "2.0", pause="version-start toy-2.0")
    run.wait_for(run.pause)
    run.signal(sig)
    code, out, err = run.finish()
    assert_stopped_cleanly(run, code, out, err, finished=["1.0"], interrupted="2.0")


@pytest.mark.fault("interrupt")
@pytest.mark.parametrize(
    ("sig", "group"), [(signal.SIGINT, False), (signal.SIGTERM, True)],
    ids=["SIGINT", "SIGTERM-group"],
)  # fmt: skip
def test_interrupt_during_the_matrix_write(
    audit: Callable[..., Run], sig: int, group: bool
) -> None:
    run = audit("1.0", pause="matrix-write")
    run.wait_for(run.pause)
    run.signal(sig, group)
    code, out, err = run.finish()
    assert_stopped_cleanly(run, code, out, err, finished=["1.0"], interrupted=None)


@pytest.mark.fault("interrupt")
@pytest.mark.parametrize(
    ("sig", "group"), [(signal.SIGINT, False), (signal.SIGTERM, False), (signal.SIGINT, True)],
    ids=["SIGINT", "SIGTERM", "SIGINT-group"],
)  # fmt: skip
def test_interrupt_while_resolving_the_targets(
    audit: Callable[..., Run], sig: int, group: bool
) -> None:
    """Before the audit runs anything (a release downloaded, an environment built): one
    line and exit 130, the download and its children stopped, nothing written."""
    run = audit("1.0", "2.0", TOY_RESOLVE_HANG="2.0")
    run.wait_for(run.marker)
    pids = run.hung_pids()
    run.signal(sig, group)
    code, out, err = run.finish()
    assert code == 130, f"exit {code}\n{out}\n{err}"
    assert "Traceback" not in err, err
    assert err.strip().splitlines() == [
        "ctxaudit: interrupted while resolving the targets: nothing was audited"
    ], err
    assert gone_within(lambda: [p for p in pids if p in processes_with(str(run.tmp))], 5) == []
    assert not any(run.out.rglob("*"))  # the folder checked writable, nothing in it
    assert run.leftovers() == []


@pytest.mark.fault("kill")
def test_sigkill_while_resolving_leaves_no_orphan(audit: Callable[..., Run]) -> None:
    run = audit("1.0", TOY_RESOLVE_HANG="1.0")
    run.wait_for(run.marker)
    pids = run.hung_pids()
    run.signal(signal.SIGKILL)
    run.finish()
    assert gone_within(lambda: [p for p in pids if p in processes_with(str(run.tmp))], 5) == []


@pytest.mark.fault("kill")
def test_sigkill_of_the_audit_leaves_no_orphan(audit: Callable[..., Run]) -> None:
    run = audit("1.0", hang="1.0")
    run.wait_for(run.marker)
    pids = run.hung_pids()
    assert all(p in processes_with(str(run.tmp)) for p in pids)  # they run now
    run.signal(signal.SIGKILL)
    run.finish()
    assert gone_within(lambda: processes_with(str(run.tmp)), 5.0) == []
    # what it could not remove itself, the next audit does
    from ctxaudit import procs

    procs.sweep_stale(run.tmp)
    assert run.leftovers() == []
