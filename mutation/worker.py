"""The mutant runner: one pytest session, one fork per mutant.

Started by ``mutation.driver`` as ``python -m mutation.worker PLAN.json`` with the
trampolined copy of the target (mutmut's ``combine_mutations_to_source``) in a work
folder. The worker

1. pins the target's top-level package to the work copy (a meta-path finder in front
   of every other import mechanism), then starts pytest on the target's tests with
   this module as a plugin, which takes over ``pytest_runtestloop``: collection, conftest
   and test-module imports happen once;
2. runs the baseline in a forked child with mutmut's ``stats`` mode on: every test must
   pass on the unmutated code (tests that fail are reported and left out), and each
   test's duration and the trampolined functions it reaches are recorded;
3. for each mutant forks a child that activates the mutant
   (``mutmut.mutation.trampoline.set_mutant_under_test``) and runs only the tests that
   reach the mutated function, fastest first, stopping at the first failure (``-x``);
   a child that outlives ``factor * baseline time of those tests + constant`` seconds is
   killed and the mutant is a timeout; a child that dies by a signal this process did
   not send (the OOM killer, an operator) runs once more, and when it dies again the
   mutant is an *error* (no verdict: neither detected nor survived, never cached);
4. runs the mutants named for a second pass again and reports both verdicts;
5. runs each killed gated mutant again under the other seeds of the plan (pass 3, the
   seed recheck): a kill is *robust* when a test whose verdict does not depend on the
   seed (one that never asked Hypothesis for randomness, seen in the baseline) kills it,
   or when it is killed under every seed; otherwise it is *seed-dependent*.

Seeds: seed 0 is the profile's own derandomized examples; any other seed ``s`` gives
every Hypothesis test the random source ``sha256(s, the test's digest)`` instead, so a
verdict under ``s`` replays with the same seed.

Results are written as JSON lines to the file descriptor given in the plan.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mutation.forking import _drain, _Job, _run_protocol, _wait, activate, fork_run, pin_package
from mutation.seeding import CONSULTED, install_seed_hook, seed_order, to_recheck

HIT_PREFIX = "hit:"
#: exit code after a mutant hung a worker that runs mutants in-process (engine.RESTART)
RESTART = 75
DETECTED = ("killed", "timeout", "crashed")


@dataclass(frozen=True)
class _Pass:
    """One pass over mutants: 1 (every mutant), 2 (the recheck) or 3 (the seed recheck),
    the seed it runs under, and the order of a mutant's tests (None: the usual order)."""

    number: int
    seed: int
    order: Callable[[dict[str, Any]], list[Any]] | None = None


@dataclass
class _PassState:
    """A pass under way: the mutants waiting, the children running, the verdicts."""

    queue: list[dict[str, Any]]
    verdicts: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: mutants whose child died by a signal not ours once, and how
    died_once: dict[str, str] = field(default_factory=dict)
    running: list[_Job] = field(default_factory=list)


@dataclass(eq=False)  # a pytest plugin is hashed by identity (pluggy, inline-snapshot)
class Plugin:
    plan: dict[str, Any]
    out: Any
    items: list[Any] = field(default_factory=list)
    #: verdicts of an earlier start of this run (``plan["resume"]``), by (pass, seed, id)
    replayed: dict[tuple[int, int, str], dict[str, Any]] = field(default_factory=dict)
    resumed_baseline: dict[str, Any] | None = None
    #: the baseline's record of each test (duration, functions reached, seed use)
    base_tests: dict[str, Any] = field(default_factory=dict)
    #: tests that fail unmutated (left out), and the rest
    failing: set[str] = field(default_factory=set)
    usable: list[Any] = field(default_factory=list)
    #: per trampolined function: the usable tests that reach it, fastest first
    by_function: dict[str, list[Any]] = field(default_factory=dict)
    #: tests whose verdict cannot depend on the seed (no Hypothesis randomness)
    seed_free: set[str] = field(default_factory=set)
    #: per function: how often each test killed one of its mutants (those go first)
    kills: dict[str, dict[str, int]] = field(default_factory=dict)
    #: per mutant: the tests that passed in pass 1
    passed_first: dict[str, set[str]] = field(default_factory=dict)

    # -- helpers run in a child -------------------------------------------------
    def _run_items(self, items: list[Any], stop_at_first_failure: bool) -> dict[str, Any]:
        from mutmut.mutation import trampoline

        hits: set[str] = set()

        def record(name: str, caller: str | None = None) -> None:
            hits.add(name)

        # stats mode reports here (mutmut's module attribute, not in its __all__)
        trampoline.record_trampoline_hit = record  # type: ignore[attr-defined]
        failed: list[str] = []
        per_test: dict[str, Any] = {}
        inline = self.plan.get("isolation") == "process"
        for i, item in enumerate(items):
            nxt = items[i + 1] if i + 1 < len(items) else None
            if nxt is None and inline:
                # tear down to the session only: its fixtures (the running service) stay
                nxt = item.session
            hits.clear()
            CONSULTED[0] = False
            t0 = time.perf_counter()
            reports = _run_protocol(item, nxt)
            dt = time.perf_counter() - t0
            bad = [r for r in reports if r.failed]
            if bad and os.environ.get("CTXAUDIT_WORKER_DEBUG") and sys.__stderr__:  # worker.log
                sys.__stderr__.write(f"{item.nodeid}: {bad[0].longreprtext[-2000:]}\n")
            per_test[item.nodeid] = {
                "duration": dt,
                "hits": sorted(hits),
                "failed": bool(bad),
                "hypothesis": CONSULTED[0],
            }
            if bad:
                failed.append(item.nodeid)
                if stop_at_first_failure:
                    break
        return {"failed": failed, "tests": per_test}

    def _fork(
        self, mutant: dict[str, Any], items: list[Any], timeout: float, stop: bool, seed: int = 0
    ) -> _Job:
        return fork_run(self._run_items, mutant, items, timeout, stop, seed)

    def _inline(
        self,
        mutant: dict[str, Any],
        items: list[Any],
        timeout: float,
        stop: bool,
        seed: int,
        on_hang: dict[str, Any] | None,
    ) -> tuple[str, dict[str, Any]]:
        """Run ``items`` against ``mutant`` in this process (``isolation = "process"``).

        A run that outlives ``timeout`` cannot be stopped from inside: a watchdog writes
        ``on_hang`` (the mutant's timeout verdict) and ends the worker with RESTART; the
        engine starts it again, and it resumes after that mutant.
        """
        from mutmut.mutation import trampoline

        def hung() -> None:
            if on_hang is not None:
                self._emit({**on_hang, "seconds": timeout})
                self._emit({"event": "restart", "after": on_hang["id"]})
            sys.stderr.write(f"mutation worker: {mutant['name']} hung after {timeout:.0f} s\n")
            sys.stderr.flush()
            os._exit(RESTART if on_hang is not None else 4)

        watchdog = threading.Timer(timeout, hung)
        watchdog.daemon = True
        scratch = tempfile.mkdtemp(prefix="ctxaudit-mutant-")
        cwd = os.getcwd()
        watchdog.start()
        try:
            activate(mutant["name"], seed)
            os.chdir(scratch)
            result = self._run_items(items, stop)
        except Exception as exc:  # noqa: BLE001 - the mutant's verdict
            return "crashed", {"reason": repr(exc)}
        finally:
            watchdog.cancel()
            trampoline.set_mutant_under_test("")  # no mutant: every function its original
            os.chdir(cwd)
            shutil.rmtree(scratch, ignore_errors=True)
        return ("fail" if result["failed"] else "pass"), result

    def _load_resume(self) -> None:
        path = self.plan.get("resume")
        if not path:
            return
        with open(path, encoding="utf-8") as f:
            for line in f:
                rec = json.loads(line)
                if rec["event"] == "baseline_detail":
                    self.resumed_baseline = rec["payload"]
                elif rec["event"] == "result":
                    self.replayed[(rec["pass"], rec.get("seed", 0), rec["id"])] = rec

    def _emit(self, record: dict[str, Any]) -> None:
        self.out.write(json.dumps(record) + "\n")
        self.out.flush()

    # -- the loop ---------------------------------------------------------------
    def _baseline(self) -> dict[str, Any]:
        seeds = self.plan.get("seeds") or [0]
        if self.plan.get("isolation") == "process":
            status, payload = self._inline(
                {"name": "stats"}, self.items, 3600.0, stop=False, seed=seeds[0], on_hang=None
            )
        else:
            job = self._fork({"name": "stats"}, self.items, 3600.0, stop=False, seed=seeds[0])
            status, payload = _wait(job, block=True)
        if status not in ("pass", "fail") or "tests" not in payload:
            raise SystemExit(f"mutation worker: baseline run crashed ({status}): {payload}")
        return payload

    def run(self) -> None:
        """The whole run: the baseline, pass 1 over every mutant, pass 2 (the recheck of
        the mutants the plan's ``recheck`` names) and pass 3 (the seed recheck), then
        ``done``."""
        t0 = time.monotonic()
        with contextlib.suppress(ImportError):
            install_seed_hook()
        self._take_baseline(t0)
        self._check_reached()
        seeds = [int(x) for x in self.plan.get("seeds") or [0]]
        first = self._run_pass(self.plan["mutants"], _Pass(1, seeds[0]))
        again = to_recheck(self.plan, first)
        second = self._run_pass(again, _Pass(2, seeds[0])) if again else {}
        if len(seeds) > 1:
            self._seed_recheck(first, second, seeds)
        self._emit({"event": "done", "seconds": time.monotonic() - t0})

    @property
    def _in_process(self) -> bool:
        """Mutants run one after another in this process (``isolation = "process"``)."""
        return self.plan.get("isolation") == "process"

    def _take_baseline(self, t0: float) -> None:
        """Run the baseline (after a restart: read back the first start's), index the
        tests that pass unmutated by the functions they reach, fastest first, and report
        the baseline (the first start only)."""
        self._load_resume()
        resumed = self.resumed_baseline is not None
        base = self.resumed_baseline if self.resumed_baseline is not None else self._baseline()
        base_time = time.monotonic() - t0
        if self._in_process and not resumed:  # what a restarted worker needs to go on
            self._emit({"event": "baseline_detail", "payload": base})
        if resumed:
            # the session's fixtures (a service, the known findings it leaves out) are
            # set up by the unmutated target, as in the first start: one test, no mutant
            warm = [it for it in self.items if it.nodeid not in set(base["failed"])][:1]
            self._inline({"name": ""}, warm, 3600.0, False, self.plan["seeds"][0], None)
        tests = self.base_tests = base["tests"]
        self.failing = set(base["failed"])
        self.usable = [it for it in self.items if it.nodeid not in self.failing]
        for it in self.usable:
            for fn in tests[it.nodeid]["hits"]:
                self.by_function.setdefault(fn, []).append(it)
        for lst in self.by_function.values():
            lst.sort(key=lambda it: (tests[it.nodeid]["duration"], it.nodeid))
        # tests whose verdict cannot depend on the seed: they never asked Hypothesis
        # for a random source in the baseline
        self.seed_free = {n for n, t in tests.items() if not t.get("hypothesis")}
        if not resumed:
            self._emit(
                {
                    "event": "baseline",
                    "seconds": base_time,
                    "tests": len(self.items),
                    "failing": sorted(self.failing),
                    "functions_reached": sorted(self.by_function),
                    "modules": {
                        name: getattr(sys.modules.get(name), "__file__", None)
                        for name in self.plan["modules"]
                    },
                }
            )

    def _check_reached(self) -> None:
        """No mutant can be judged when no test reached a mutated function: the worker
        stops, saying whether the suite fails unmutated or the target was not imported
        from the work copy."""
        plan, failing = self.plan, self.failing
        # a mutant whose function only subprocess tests reach (also_tests) is still judged
        reached_elsewhere = any(mu.get("also_tests") for mu in plan["mutants"])
        if self.by_function or reached_elsewhere or plan.get("allow_unreached"):
            return
        if failing and not self.usable:  # not a path problem: the suite fails unmutated
            shown = ", ".join(sorted(failing)[:3]) + (" ..." if len(failing) > 3 else "")
            raise SystemExit(
                f"mutation worker: every test fails on the unmutated tree ({shown}), so no "
                "mutant can be judged; run the suite on the tree (the mutation profile) "
                "and mend or record the failure first"
            )
        raise SystemExit(
            "mutation worker: no test reached a mutated function - is the target "
            "imported from the work copy?"
        )

    def _ordered(self, mu: dict[str, Any]) -> list[Any]:
        """The tests a mutant runs: those that reach its function (and its subprocess
        tests), the ones that killed its function's other mutants first, then fastest."""
        key = mu["function_key"]
        seen = self.kills.get(key, {})
        extra = tuple(mu.get("also_tests", ()))
        chosen = {it.nodeid: it for it in self.by_function.get(key, [])}
        if extra:
            chosen.update({it.nodeid: it for it in self.usable if it.nodeid.startswith(extra)})
        tests = self.base_tests
        return sorted(
            chosen.values(),
            key=lambda it: (-seen.get(it.nodeid, 0), tests[it.nodeid]["duration"], it.nodeid),
        )

    def _verdict(
        self,
        mu: dict[str, Any],
        pas: _Pass,
        status: str,
        payload: dict[str, Any],
        seconds: float,
        ntests: int,
    ) -> dict[str, Any]:
        """The result record of a mutant's run in a pass: its verdict, its killer and
        whether that test is seed-free, the tests that passed (pass 1), why it crashed."""
        verdict = {"fail": "killed", "pass": "survived"}.get(status, status)
        rec: dict[str, Any] = {
            "event": "result",
            "pass": pas.number,
            "seed": pas.seed,
            "id": mu["id"],
            "status": verdict,
            "seconds": seconds,
            "tests": ntests,
        }
        if verdict == "killed" and payload.get("failed"):
            rec["killed_by"] = payload["failed"][0]
            rec["seed_free"] = rec["killed_by"] in self.seed_free
            rec["tests_completed"] = len(payload.get("tests", {}))
        if pas.number == 1:
            rec["passed"] = sorted(
                n for n, t in payload.get("tests", {}).items() if not t["failed"]
            )
        if verdict in ("crashed", "error"):
            rec["reason"] = payload.get("reason") or payload.get("error", "")
        return rec

    def _account(self, mu: dict[str, Any], rec: dict[str, Any]) -> None:
        """Note a result: its killer goes first for its function's next mutants; pass 1's
        passing tests are what pass 3 need not run again."""
        if rec.get("killed_by"):
            per = self.kills.setdefault(mu["function_key"], {})
            per[rec["killed_by"]] = per.get(rec["killed_by"], 0) + 1
        if rec["pass"] == 1:
            self.passed_first[mu["id"]] = set(rec.get("passed", ()))

    def _record(self, mu: dict[str, Any], rec: dict[str, Any], state: _PassState) -> None:
        """A mutant's result in a pass: noted, kept as the pass's verdict, written out."""
        self._account(mu, rec)
        state.verdicts[mu["id"]] = rec
        self._emit(rec)

    def _run_pass(self, mutants: list[dict[str, Any]], pas: _Pass) -> dict[str, dict[str, Any]]:
        """Run ``mutants`` in a pass, ``jobs`` children at a time (one after another in
        this process without forks); their result records by id."""
        state = _PassState(queue=list(mutants))
        jobs = 1 if self._in_process else max(1, int(self.plan.get("jobs", 1)))
        while state.queue or state.running:
            while state.queue and len(state.running) < jobs:
                self._start(state.queue.pop(0), pas, state)
            if state.running:
                self._collect(pas, state)
        return state.verdicts

    def _start(self, mu: dict[str, Any], pas: _Pass, state: _PassState) -> None:
        """Start a mutant's run: its verdict from before a restart, ``no-coverage`` when
        no test reaches it, its run in this process (to the end), or a child."""
        earlier = self.replayed.get((pas.number, pas.seed, mu["id"]))
        if earlier is not None:  # decided before a restart
            self._account(mu, earlier)
            state.verdicts[mu["id"]] = earlier
            return
        items = pas.order(mu) if pas.order else self._ordered(mu)
        if not items:
            rec = self._verdict(mu, pas, "no-coverage", {}, 0.0, 0)
            state.verdicts[mu["id"]] = rec
            self._emit(rec)
            return
        budget = sum(self.base_tests[it.nodeid]["duration"] for it in items)
        timeout = self.plan["timeout_factor"] * budget + self.plan["timeout_constant"]
        if not self._in_process:
            state.running.append(self._fork(mu, items, timeout, stop=True, seed=pas.seed))
            return
        started = time.monotonic()
        hang = self._verdict(mu, pas, "timeout", {}, timeout, len(items))
        status, payload = self._inline(mu, items, timeout, True, pas.seed, hang)
        rec = self._verdict(mu, pas, status, payload, time.monotonic() - started, len(items))
        self._record(mu, rec, state)

    def _collect(self, pas: _Pass, state: _PassState) -> None:
        """Wait for the first running child to finish or outlive its time, and take the
        result of each that did."""
        now = time.monotonic()
        wait = max(0.0, min(j.deadline for j in state.running) - now)
        ready, _, _ = select.select([j.fd for j in state.running], [], [], wait)
        for job in list(state.running):
            done = job.fd in ready and _drain(job)
            if not done and time.monotonic() < job.deadline:
                continue
            status, payload = _wait(job, block=True)
            state.running.remove(job)
            self._finished(job, (status, payload), pas, state)

    def _finished(
        self, job: _Job, outcome: tuple[str, dict[str, Any]], pas: _Pass, state: _PassState
    ) -> None:
        """A child's outcome as its mutant's result; a child killed from outside (the OOM
        killer, an operator) gives no verdict: it runs once more, and a second death makes
        the mutant an error, never a kill."""
        status, payload = outcome
        if status == "died":
            mid = job.mutant["id"]
            if mid not in state.died_once:
                state.died_once[mid] = payload["reason"]
                self._emit(
                    {"event": "rerun", "pass": pas.number, "seed": pas.seed, "id": mid,
                     "reason": payload["reason"]}
                )  # fmt: skip
                state.queue.insert(0, job.mutant)
                return
            status = "error"
            payload = {
                "reason": f"{state.died_once[mid]} in the first run, "
                f"{payload['reason']} in the rerun"
            }
        rec = self._verdict(
            job.mutant, pas, status, payload, time.monotonic() - job.started, job.tests
        )
        self._record(job.mutant, rec, state)

    def _seed_recheck(
        self,
        first: dict[str, dict[str, Any]],
        second: dict[str, dict[str, Any]],
        seeds: list[int],
    ) -> None:
        """Pass 3: each gated mutant killed in pass 1 by a test that depends on the seed
        runs again under every other seed, until a seed lets it survive (seed-dependent)
        or a seed-free test kills it (robust by nature). Under each seed the seed-free
        tests that did not already pass in pass 1 go first, then the pass-1 killer."""
        undecided = [
            mu
            for mu in self.plan["mutants"]
            if mu.get("gated")
            and first[mu["id"]]["status"] in DETECTED
            and not first[mu["id"]].get("seed_free")
            and second.get(mu["id"], {}).get("status", "killed") in ("killed", "timeout")
        ]

        def order(mu: dict[str, Any]) -> list[Any]:
            done = self.passed_first.get(mu["id"], set())
            killer = first[mu["id"]].get("killed_by")
            return seed_order(self._ordered(mu), self.seed_free, self.base_tests, done, killer)

        for seed in seeds[1:]:
            if not undecided:
                break
            got = self._run_pass(undecided, _Pass(3, seed, order))
            undecided = [
                mu
                for mu in undecided
                if got[mu["id"]]["status"] in DETECTED and not got[mu["id"]].get("seed_free")
            ]

    # -- pytest hooks -------------------------------------------------------------
    def pytest_collection_finish(self, session: Any) -> None:
        drop = tuple(self.plan.get("deselect", ()))
        self.items = [it for it in session.items if not (drop and it.nodeid.startswith(drop))]

    def pytest_runtestloop(self, session: Any) -> bool:
        if session.testsfailed and not session.config.option.continue_on_collection_errors:
            raise SystemExit("mutation worker: test collection failed")
        self.run()
        return True


def main(argv: list[str]) -> int:
    with open(argv[0], encoding="utf-8") as f:
        plan = json.load(f)
    if plan["package"]:
        pin_package(plan["package"], plan["tree"])
    # a peer suite's own packages (e.g. the sdist's gitreins/ beside engine/) come
    # right after the pinned work copy, before site-packages
    for extra in reversed(plan.get("sys_path", [])):
        sys.path.insert(1, extra)
    import importlib

    for name in plan.get("preload", []):
        importlib.import_module(name)
    import pytest

    out = os.fdopen(int(plan["result_fd"]), "w")
    plugin = Plugin(plan, out)
    args = [
        *plan["tests"],
        *plan["pytest_args"],
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:cov",
        "-p",
        "no:randomly",
        "--no-header",
    ]
    code = int(pytest.main(args, plugins=[plugin]))
    out.close()
    return 0 if code in (0, 1) else code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
