"""Warm runs (``ctxaudit/warm.py``, ``ctxaudit/warm_server.py``): a forked run sees
exactly its own variables, folder, path and argv, and ends as a cold one does (its exit,
its ``atexit``); what the server cannot serve runs cold, and nothing of it ran warm; a
run is the audit's child as a cold one is: a timeout, an interrupt and the audit's death
stop it and what it started; and a real suite gives the same results warm and cold."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxaudit import procs, warm
from ctxaudit.suite_run import run_with_ticker

PROBE = """\
import atexit, json, os, sys
print(json.dumps({"x": os.environ.get("CTXAUDIT_X"), "cwd": os.getcwd(),
                  "path": sys.path[:2], "argv": sys.argv[1:]}))
open(os.environ["CTXAUDIT_RAN"], "w").close()
atexit.register(lambda: open(os.environ["CTXAUDIT_RAN"] + ".atexit", "w").close())
raise SystemExit(int(os.environ.get("CTXAUDIT_EXIT", "0")))
"""

#: a run that starts a child of its own, writes both pids, and sleeps
SLEEPER = """\
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
with open(os.environ["CTXAUDIT_PIDS"], "w") as f:
    f.write(f"{os.getpid()} {child.pid}")
time.sleep(120)
"""


@pytest.fixture(autouse=True)
def fresh_servers(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("CTXAUDIT_WARM", raising=False)  # a whole run made cold
    warm.close_all()
    yield
    warm.close_all()
    procs.reset()


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CTXAUDIT_WARM")}
    return {**env, "CTXAUDIT_RAN": str(tmp / "ran"), **extra}


def _run(tmp: Path, module: str, env: dict[str, str], **kw: object) -> int | None:
    cmd = [sys.executable, "-m", module, "a", "b"]
    return warm.run(cmd, env, tmp, tmp / "out", ["json"], **kw)  # type: ignore[arg-type]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead: it only waits for its parent to read its exit
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ")[-1].startswith("Z"))


def _gone(*pids: int, within: float = 20.0) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not any(_alive(p) for p in pids):
            return True
        time.sleep(0.1)
    return False


def _pids(path: Path, within: float = 60.0) -> list[int]:
    end = time.monotonic() + within
    while time.monotonic() < end:
        if path.exists() and " " in path.read_text():
            return [int(p) for p in path.read_text().split()]
        time.sleep(0.1)
    raise AssertionError("the run did not start")


def test_a_run_sees_its_own_variables_folder_path_and_argv(tmp_path: Path) -> None:
    (tmp_path / "probe.py").write_text(PROBE)
    extra = tmp_path / "first"
    extra.mkdir()
    env = _env(tmp_path, CTXAUDIT_X="one", CTXAUDIT_EXIT="3", PYTHONPATH=str(extra))
    assert _run(tmp_path, "probe", env) == 3, (tmp_path / "out").read_text()
    seen = json.loads((tmp_path / "out").read_text().splitlines()[-1])
    assert seen == {"x": "one", "cwd": str(tmp_path), "path": [str(tmp_path), str(extra)],
                    "argv": ["a", "b"]}  # fmt: skip
    assert (tmp_path / "ran.atexit").exists(), "the run did not end as an interpreter does"
    (server,) = warm._servers.values()
    assert server.served == 1


def test_a_script_runs_as_the_interpreter_runs_it(tmp_path: Path) -> None:
    """``python folder/program.py``: the script's own folder first on its path (a sibling
    imports as a top-level module), its path as ``argv[0]``, run as ``__main__``."""
    folder = tmp_path / "programs"
    folder.mkdir()
    (folder / "sibling.py").write_text("NAME = 'sibling'\n")
    (folder / "program.py").write_text(
        "import json, sys\nimport sibling\n"
        "print(json.dumps({'main': __name__, 'argv': sys.argv, 'first': sys.path[0],"
        " 'sibling': sibling.NAME}))\nraise SystemExit(1)\n"
    )
    cmd = [sys.executable, "programs/program.py", "x"]
    code = warm.run(cmd, _env(tmp_path), tmp_path, tmp_path / "out", ["json"])
    assert code == 1, (tmp_path / "out").read_text()
    seen = json.loads((tmp_path / "out").read_text().splitlines()[-1])
    assert seen == {"main": "__main__", "argv": [str(folder / "program.py"), "x"],
                    "first": str(folder), "sibling": "sibling"}  # fmt: skip
    (server,) = warm._servers.values()
    assert server.served == 1
    cold = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert cold.returncode == 1, cold.stderr
    assert {**json.loads(cold.stdout), "argv": seen["argv"]} == seen, "not as a cold run"


def test_a_variable_that_differs_from_the_servers_is_not_served_by_it(tmp_path: Path) -> None:
    (tmp_path / "probe.py").write_text(PROBE)
    assert _run(tmp_path, "probe", _env(tmp_path)) == 0
    assert _run(tmp_path, "probe", _env(tmp_path, CTXAUDIT_X="1")) == 0  # a per-run one
    assert len(warm._servers) == 1
    other = {**_env(tmp_path), "OTHER": "1"}  # one a preloaded module could have read
    assert _run(tmp_path, "probe", other) == 0
    assert len(warm._servers) == 2, "a run with other variables went to the first server"
    # the first server's own guard, should a run with other variables reach it
    first = next(iter(warm._servers.values()))
    (tmp_path / "ran").unlink()
    run = first.start({"module": "probe"}, [], other, tmp_path / "out")
    assert run is not None and run.wait(60) and run.code is None
    assert "not served warm: OTHER" in (tmp_path / "out").read_text()
    assert not (tmp_path / "ran").exists(), "a run refused warm must not have run"


def test_a_preloaded_module_on_the_runs_path_runs_cold(tmp_path: Path) -> None:
    (tmp_path / "probe.py").write_text(PROBE)
    own = tmp_path / "own"
    own.mkdir()
    (own / "json").mkdir()  # the run's own json package, put first
    assert _run(tmp_path, "probe", _env(tmp_path, PYTHONPATH=str(own))) is None
    assert "not served warm: json" in (tmp_path / "out").read_text()
    assert not (tmp_path / "ran").exists()


def test_a_package_preloaded_from_the_runs_path_serves_only_runs_that_find_it_there(
    tmp_path: Path,
) -> None:
    """A target's own package on PYTHONPATH is preloaded from there (the first run's);
    a run whose path finds another copy, or none, runs cold."""
    (tmp_path / "probe.py").write_text(PROBE)
    tree, copy = tmp_path / "tree", tmp_path / "copy"
    for folder in (tree, copy):
        folder.mkdir()
        (folder / "mylib.py").write_text("VALUE = 1\n")

    def run(**extra: str) -> int | None:
        cmd = [sys.executable, "-m", "probe"]
        return warm.run(cmd, _env(tmp_path, **extra), tmp_path, tmp_path / "out", ["mylib"])

    assert run(PYTHONPATH=str(tree)) == 0 and run(PYTHONPATH=str(tree)) == 0
    (server,) = warm._servers.values()
    assert server.served == 2
    assert run(PYTHONPATH=str(copy)) is None
    assert f"mylib ({copy}, loaded from {tree})" in (tmp_path / "out").read_text()
    assert run() is None and "mylib (not on the run path" in (tmp_path / "out").read_text()
    assert server.served == 4  # forked, then refused by the guard: nothing of them ran


def test_warm_runs_off_runs_nothing_warm(tmp_path: Path) -> None:
    (tmp_path / "probe.py").write_text(PROBE)
    assert _run(tmp_path, "probe", _env(tmp_path, CTXAUDIT_WARM="0")) is None
    assert not warm._servers and not (tmp_path / "ran").exists()


def test_a_run_past_its_timeout_is_killed_with_what_it_started(tmp_path: Path) -> None:
    (tmp_path / "sleeper.py").write_text(SLEEPER)
    (tmp_path / "probe.py").write_text(PROBE)
    env = _env(tmp_path, CTXAUDIT_PIDS=str(tmp_path / "pids"))
    with pytest.raises(subprocess.TimeoutExpired):
        _run(tmp_path, "sleeper", env, timeout=5)
    assert _gone(*_pids(tmp_path / "pids"))
    assert _run(tmp_path, "probe", env) == 0  # the server serves on


def test_an_interrupt_stops_a_warm_run_and_what_it_started(tmp_path: Path) -> None:
    import threading

    (tmp_path / "sleeper.py").write_text(SLEEPER)
    env = _env(tmp_path, CTXAUDIT_PIDS=str(tmp_path / "pids"))
    cmd = [sys.executable, "-m", "sleeper"]
    raised: list[BaseException] = []

    def audit() -> None:
        try:
            run_with_ticker(cmd, {**env, "PYTHONPATH": str(tmp_path)}, None, ["json"])
        except BaseException as exc:  # noqa: BLE001 - what the audit's thread saw
            raised.append(exc)

    worker = threading.Thread(target=audit)
    worker.start()
    pids = _pids(tmp_path / "pids")
    assert pids[0] in procs.live_groups(), "the warm run is not one of the audit's children"
    procs.interrupt(signal.SIGINT)
    worker.join(30)
    assert not worker.is_alive() and raised and isinstance(raised[0], procs.Interrupted)
    assert _gone(*pids)


def test_the_audits_death_ends_its_warm_runs(tmp_path: Path) -> None:
    (tmp_path / "sleeper.py").write_text(SLEEPER)
    audit = textwrap.dedent(f"""\
        import sys
        from pathlib import Path
        from ctxaudit import warm
        tmp = Path({str(tmp_path)!r})
        warm.run([sys.executable, "-m", "sleeper"], dict(__import__("os").environ),
                 tmp, tmp / "out", ["json"])
    """)
    env = _env(tmp_path, CTXAUDIT_PIDS=str(tmp_path / "pids"))
    env["PYTHONPATH"] = str(Path(warm.__file__).parents[1])
    proc = subprocess.Popen([sys.executable, "-c", audit], env=env, cwd=tmp_path)
    try:
        pids = _pids(tmp_path / "pids")
    finally:
        proc.kill()
        proc.wait()
    assert _gone(*pids), "a warm run outlived the audit that started it"


def test_a_suite_gives_the_same_results_warm_and_cold(tmp_path: Path) -> None:
    """The ledger's settlement lockstep, as the audit runs it: the same tests and
    outcomes warm as cold."""
    from ctxaudit import targets
    from ctxaudit.suite_run import run_pytest

    kind = targets.get("ledger")
    (target,) = kind.expand("ledger")
    suite = [f"{kind.suites[0]}/test_stateful.py"]

    def outcomes(**extra: str) -> tuple[int, list[tuple[str, str]]]:
        status, tests, _, _ = run_pytest(target, suite, "ci", 0, extra)
        return status, sorted((t["nodeid"], t["outcome"]) for t in tests)

    cold = outcomes(CTXAUDIT_WARM="0")
    assert not warm._servers
    warmed = outcomes()
    assert [s.served for s in warm._servers.values()] == [1], "the suite did not run warm"
    assert warmed == cold and cold[1], cold
