"""The audit: run the property suites against targets and write reports.

Each target version runs in its own pytest process (versions never share
imported modules). For each one the audit writes
``reports/<target>-<version>/findings.json`` and ``findings.md``: every
property with its verdict and, for each finding, the minimal reproduction
Hypothesis shrank to.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ctxaudit import findings as registry
from ctxaudit.target_report import Finding, TargetReport, heading, judge
from ctxaudit.target_report import extract_findings as extract_findings  # re-exported
from ctxaudit.targets.gitreins import REPO_ROOT, TargetError, resolve
from ctxaudit.templating import render

PROPERTIES: dict[str, dict[str, str]] = {
    "gitreins": {
        "B1": "metering",
        "B2": "input/output cap at >=",
        "B3": "iteration cap checked before the call",
        "B4": "time cap",
        "B5": "context reset",
        "B6": "cap configuration",
        "V1": "when the valve fires",
        "V2": "never when unlimited or idle",
        "V3": "what compaction does",
        "V4": "progress survives",
        "V5": "at most three",
        "V6": "context errors",
        "V7": "the valve protects the cap",
        "V8": "bad configuration",
    },
    "ledger": {
        "S1": "whose turn",
        "S2": "what is stored",
        "S3": "once",
        "S4": "hand-over",
        "S5": "nothing slips through",
        "S6": "the conversation",
        "S7": "failed writes",
        "S8": "one writer",
        "S9": "compaction is invisible (blocking paths)",
        "C1": "compaction trigger",
    },
    "lightspeed-stack": {
        "S1": "whose turn",
        "S2": "what is stored",
        "S3": "once",
        "S4": "hand-over (needs an owner: not in these trees)",
        "S5": "nothing slips through (needs an owner: not in these trees)",
        "S6": "the conversation",
        "S7": "failed writes (the tree's own writes, failed through the OGX client)",
        "S8": "one writer (needs an owner: not in these trees)",
        "S9": "compaction is invisible",
        "C1": "compaction trigger",
    },
}
SUITES = {
    "gitreins": ["tests/gitreins"],
    "ledger": ["tests/settlement"],
    "lightspeed-stack": ["tests/lightspeed/inenv"],
}
LIGHTSPEED = "lightspeed-stack"
# Tests about the suite itself (release history), not about one target.
NOT_PER_TARGET = ["tests/gitreins/test_history.py", "tests/lightspeed/inenv/test_history.py"]


@dataclass
class Target:
    kind: str  # "gitreins" | "ledger" | "lightspeed-stack"
    spec: str  # what the suite is given (--gitreins=..., a lightspeed-stack spec)
    version: str
    repo: Path | None = None  # lightspeed-stack: the repository the spec is resolved in

    @property
    def label(self) -> str:
        return f"{self.kind}-{self.version}"


def parse_target(spec: str, lightspeed_repo: Path | None = None) -> list[Target]:
    """``ledger``, ``gitreins==X``, ``gitreins>=X`` (a range), ``gitreins``
    (pinned), a path to a gitreins tree, or a lightspeed-stack spec
    (``lightspeed-stack==TAG``, ``@REV``, a range of tags, or a path to a
    working tree, resolved in ``lightspeed_repo``). Raises TargetError."""
    spec = spec.strip()
    if spec.startswith(LIGHTSPEED) or _is_lightspeed_tree(spec):
        return _lightspeed_targets(spec, lightspeed_repo)
    if spec == "ledger":
        return [Target("ledger", "ledger", _ledger_version())]
    if spec in ("gitreins", "gitreins==pinned"):
        tree = resolve("")
        return [Target("gitreins", tree.version, tree.version)]
    m = re.match(r"^gitreins\s*(==|>=|<=|>|<|~=|!=)\s*(\S+)$", spec)
    if m and m.group(1) == "==":
        tree = resolve(f"gitreins=={m.group(2)}")
        return [Target("gitreins", tree.version, tree.version)]
    if m or (spec.startswith("gitreins") and "," in spec):
        return [Target("gitreins", v, v) for v in published_versions(spec)]
    if spec.startswith("gitreins") or "/" in spec or Path(spec).exists():
        if spec.startswith("gitreins"):
            raise TargetError(
                f"target {spec!r}: expected gitreins==X, a range like gitreins>=0.13.0, or a path"
            )
        tree = resolve(spec)
        return [Target("gitreins", str(tree.root), tree.version)]
    raise TargetError(f"target {spec!r}: expected 'ledger', 'gitreins==X', 'gitreins>=X' or a path")


def _is_lightspeed_tree(spec: str) -> bool:
    return (Path(spec).expanduser() / "src/app/endpoints/query.py").is_file()


def _lightspeed_targets(spec: str, repo: Path | None) -> list[Target]:
    from ctxaudit.targets.lightspeed import tree as lstree

    try:
        trees = lstree.resolve_many(spec, repo)
    except lstree.TargetError as exc:
        raise TargetError(str(exc)) from None
    targets = []
    for tree in trees:
        if tree.origin == "path":
            again = str(tree.root)
        elif tree.tag:
            again = f"{LIGHTSPEED}=={tree.tag}"
        else:
            again = f"{LIGHTSPEED}@{tree.commit}"
        version = tree.label.removeprefix(f"{LIGHTSPEED}-")
        rev = spec.partition("@")[2]
        if tree.origin == "rev" and rev and not re.fullmatch(r"[0-9a-f]{7,40}", rev):
            version = f"{rev.replace('/', '-')}-g{(tree.commit or '')[:7]}"  # main-gcd1a048
        targets.append(Target(LIGHTSPEED, again, version, repo))
    return targets


def published_versions(spec: str) -> list[str]:
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.version import Version

    try:
        req = Requirement(spec.replace(" ", ""))
    except InvalidRequirement as exc:
        raise TargetError(f"target {spec!r}: {exc}") from None
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "index",
            "versions",
            "gitreins",
            "--disable-pip-version-check",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    m = re.search(r"Available versions:\s*(.+)", proc.stdout)
    if proc.returncode != 0 or not m:
        raise TargetError(f"target {spec!r}: could not list gitreins releases from PyPI")
    versions = sorted((Version(v.strip()) for v in m.group(1).split(",")), reverse=False)
    chosen = [str(v) for v in versions if req.specifier.contains(v)]
    if not chosen:
        raise TargetError(f"target {spec!r}: no published gitreins version matches")
    return chosen


def _ledger_version() -> str:
    """The ledger is versioned with the project (pyproject.toml), as in the
    mutation reports, so both land in reports/ledger-<version>/."""
    import importlib.metadata

    try:
        return importlib.metadata.version("ctxaudit")
    except importlib.metadata.PackageNotFoundError:
        return "local"


KNOWN_FINDINGS_TESTS = {"gitreins": "tests/gitreins/test_findings.py"}


Ticker = Callable[[str], None]


def run_with_ticker(
    cmd: list[str], env: dict[str, str], ticker: Ticker | None
) -> tuple[int, str, float]:
    """Run a command, calling ``ticker`` with a status line every second."""
    started = time.monotonic()
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(
            cmd, cwd=REPO_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, text=True
        )
        while proc.poll() is None:
            if ticker is not None:
                ticker(f"{time.monotonic() - started:.0f} s")
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=1.0)
        out.seek(0)
        return proc.returncode, out.read(), time.monotonic() - started


def _pytest(
    target: Target,
    paths: list[str],
    profile: str,
    seed: int | None,
    extra_env: dict[str, str],
    ticker: Ticker | None = None,
) -> tuple[int, list[dict[str, Any]], str, float]:
    """Run pytest on ``paths`` for ``target`` in a fresh process."""
    with tempfile.TemporaryDirectory(prefix="ctxaudit-") as tmp:
        results = Path(tmp) / "results.json"
        python, base_env = sys.executable, dict(os.environ)
        if target.kind == LIGHTSPEED:
            python, base_env = _lightspeed_process(target, tmp)
        cmd = [python, "-m", "pytest", *paths, "-q", "-p", "no:cacheprovider"]
        cmd += ["-p", "ctxaudit.pytest_results", "--show-capture=no", "--tb=long"]
        cmd += [f"--ignore={p}" for p in NOT_PER_TARGET]
        if target.kind == "gitreins":
            cmd.append(f"--gitreins={target.spec}")
        if seed is not None:
            cmd.append(f"--hypothesis-seed={seed}")
        env = {**base_env, "CTXAUDIT_PROFILE": profile, "CTXAUDIT_RESULTS": str(results)}
        env.update(extra_env)
        status, output, elapsed = run_with_ticker(cmd, env, ticker)
        tests = json.loads(results.read_text())["tests"] if results.exists() else []
    return status, tests, output, elapsed


def _lightspeed_process(target: Target, tmp: str) -> tuple[str, dict[str, str]]:
    """The tree's environment python and the child environment (builds it once)."""
    from ctxaudit.targets.lightspeed import runner
    from ctxaudit.targets.lightspeed import tree as lstree
    from ctxaudit.targets.lightspeed.env import ensure_env

    tree = lstree.resolve(target.spec, target.repo)
    env = ensure_env(tree)
    return str(env.python), runner.child_env(env, tree, {"TMPDIR": tmp})


def _lightspeed_known(target: Target, ticker: Ticker | None) -> list[dict[str, Any]]:
    """Phase 1 for lightspeed-stack: each known finding's fixed program on the tree."""
    from ctxaudit.targets.lightspeed import findings as lsfindings
    from ctxaudit.targets.lightspeed import runner

    path = f"{runner.INENV}/test_findings.py"
    with tempfile.TemporaryDirectory(prefix="ctxaudit-") as tmp:
        repro = Path(tmp) / "reproduction.json"
        env = {"CTXAUDIT_LIGHTSPEED_REPRODUCTION": str(repro)}
        _, tests, output, _ = _pytest(target, [path], "ci", None, env, ticker)
        shown = json.loads(repro.read_text()) if repro.exists() else {}
    outcome = {t["nodeid"]: t["outcome"] for t in tests if t["when"] == "call"}
    known = []
    for f in lsfindings.FINDINGS:
        nodeid = f"{path}::test_known_finding[{f.id}]"
        known.append(
            {
                "id": f.id,
                "property": f.props,
                "summary": f.summary,
                "region": f.region,
                "repro": nodeid,
                "registered": outcome.get(nodeid) in ("passed", "failed"),
                "affects": f.id in shown.get("reproducing", []),
            }
        )
    return known


def known_findings(target: Target, ticker: Ticker | None = None) -> list[dict[str, Any]]:
    """Phase 1: which of the target's known findings reproduce on this version
    (their regression tests, run with every known finding assumed)."""
    if target.kind == LIGHTSPEED:
        return _lightspeed_known(target, ticker)
    path = KNOWN_FINDINGS_TESTS.get(target.kind)
    if path is None:
        return []
    _, tests, _, _ = _pytest(target, [path], "ci", None, {"CTXAUDIT_FINDINGS": "all"}, ticker)
    outcome = {t["nodeid"]: t["outcome"] for t in tests if t["when"] == "call"}
    known = []
    for f in registry.FINDINGS:
        if f.target != target.kind:
            continue
        known.append(
            {
                "id": f.id,
                "property": f.prop,
                "summary": f.summary,
                "region": f.region,
                "repro": f.repro,
                "registered": target.version in f.versions,
                "affects": outcome.get(f.repro) == "passed",
            }
        )
    return known


def run_target(
    target: Target,
    profile: str,
    seed: int | None,
    out_root: Path,
    progress: Callable[[str, str], None] | None = None,
    fixed_seeds: Sequence[int] = (),
) -> TargetReport:
    """Run the target's suites in their own processes and write its reports.
    ``fixed_seeds``: more seeds for the fully fixed tree of the fix audit.

    Phase 1 learns which known findings reproduce on this version; phase 2
    runs every property with exactly those regions left out, so what fails
    there is new."""

    def phase(name: str) -> Ticker | None:
        return None if progress is None else (lambda t: progress(name, t))

    known = known_findings(target, phase("known findings"))
    affecting = ",".join(k["id"] for k in known if k["affects"])
    env = {"CTXAUDIT_FINDINGS": affecting} if target.kind in KNOWN_FINDINGS_TESTS else {}
    status, tests, output, elapsed = _pytest(
        target, SUITES[target.kind], profile, seed, env, phase("properties")
    )
    report = TargetReport(
        target=target.kind,
        version=target.version,
        spec=target.spec,
        profile=profile,
        seed=seed,
        elapsed_s=round(elapsed, 1),
        exit_status=status,
        tests=tests,
        known=known,
    )
    if status not in (0, 1) or not tests:
        tail = output.strip().splitlines()[-5:]
        report.findings.append(Finding([], "the suite did not run: " + " | ".join(tail), "-", ""))
    judge(report, PROPERTIES[report.target])
    if target.kind in KNOWN_FINDINGS_TESTS and tests and os.environ.get("CTXAUDIT_FIXES") != "0":
        run_fix_audit(target, report, out_root, phase("fixes"), fixed_seeds)
    write_reports(report, out_root)
    return report


def run_fix_audit(
    target: Target,
    report: TargetReport,
    out_root: Path,
    ticker: Ticker | None = None,
    fixed_seeds: Sequence[int] = (),
) -> None:
    """The fix audit (``ctxaudit/fixaudit.py``): each fix verified, every property on
    the fully fixed tree, each failure attributed. Each pytest run is its own process."""
    from ctxaudit.fixaudit import fix_audit

    def run(
        tree: str, paths: list[str], env: dict[str, str], replays: dict[str, list[str]]
    ) -> list[dict[str, Any]]:
        env = {**env, "CTXAUDIT_REPLAY": json.dumps(replays)}
        env["PYTEST_ADDOPTS"] = "-p ctxaudit.replay"
        seed = int(env.pop("CTXAUDIT_SEED")) if "CTXAUDIT_SEED" in env else report.seed
        fixed = Target(target.kind, tree, target.version, target.repo)
        return _pytest(fixed, paths, report.profile, seed, env)[1]

    root = resolve(target.spec).root
    out = out_root / target.label
    fix_audit(
        report, root, run, SUITES[target.kind], PROPERTIES[target.kind], out, ticker,
        seeds=fixed_seeds,
    )  # fmt: skip


def run_attribute(
    spec: str, fix_id: str, test: str, blob: str | None, profile: str, seed: int | None
) -> int:
    """``ctxaudit attribute``: rerun one attribution of the fix audit (the regions left
    out are ``CTXAUDIT_FINDINGS``, as the report's command sets them). Exit 0 when the
    fix explains the failure, 1 when not, 2 on bad usage."""
    from ctxaudit import fixes as fixlib
    from ctxaudit.fixaudit import attribute

    try:
        (target,) = [t for t in parse_target(spec, None) if t.kind == "gitreins"]
    except (TargetError, ValueError):
        print(f"ctxaudit: attribute needs one gitreins version, got {spec!r}", file=sys.stderr)
        return 2
    fix = fixlib.load_all().get(fix_id)
    if fix is None:
        print(f"ctxaudit: no fix for {fix_id!r} in ctxaudit/fixes", file=sys.stderr)
        return 2
    env = {"CTXAUDIT_FINDINGS": os.environ.get("CTXAUDIT_FINDINGS", "none")}

    def run(
        tree: str, paths: list[str], env: dict[str, str], replays: dict[str, list[str]]
    ) -> list[dict[str, Any]]:
        env = {**env, "CTXAUDIT_REPLAY": json.dumps(replays)}
        env["PYTEST_ADDOPTS"] = "-p ctxaudit.replay"
        copy = Target(target.kind, tree, target.version, target.repo)
        return _pytest(copy, paths, profile, seed, env)[1]

    root = resolve(target.spec).root
    text, explained = attribute(root, target.version, fix, test, blob, run, env)
    print(text)
    return 0 if explained else 1


def write_reports(report: TargetReport, out_root: Path) -> Path:
    out = out_root / f"{report.target}-{report.version}"
    out.mkdir(parents=True, exist_ok=True)
    payload = asdict(report)
    payload["ok"] = report.ok
    payload.pop("tests")
    payload["tests"] = [{k: v for k, v in t.items() if k != "longrepr"} for t in report.tests]
    (out / "findings.json").write_text(json.dumps(payload, indent=2) + "\n")
    (out / "findings.md").write_text(render_markdown(report))
    return out


def render_markdown(report: TargetReport) -> str:
    """findings.md (template ``ctxaudit/templates/findings.md.j2``)."""
    return render(
        "findings.md.j2",
        r=report,
        names=PROPERTIES[report.target],
        heading=heading,
        rerun=lambda nodeid: rerun_command(report, nodeid),
        registry=_registry_file(report.target),
    )


def _registry_file(target: str) -> str:
    if target == LIGHTSPEED:
        return "ctxaudit/targets/lightspeed/findings.py"
    return "ctxaudit/findings.py"


def rerun_command(report: TargetReport, nodeid: str) -> str:
    """The command that reruns one test against this target, same profile and seed."""
    if report.target == LIGHTSPEED:  # the in-environment suite, through its runner test
        cmd = (
            f"CTXAUDIT_PROFILE={report.profile} bin/ctxaudit test "
            "tests/lightspeed/test_lightspeed.py::test_lockstep_and_findings "
            f"--lightspeed-repo=REPO '--lightspeed={report.spec}'"
        )
        if report.seed is not None:
            cmd += f" --hypothesis-seed={report.seed}"
        return cmd
    cmd = f"CTXAUDIT_PROFILE={report.profile} bin/ctxaudit test '{nodeid}'"
    affecting = ",".join(k["id"] for k in report.known if k["affects"])
    if report.target in KNOWN_FINDINGS_TESTS:  # the same regions left out as in the audit
        cmd = f"CTXAUDIT_FINDINGS={affecting or 'none'} {cmd}"
    if report.target == "gitreins":
        cmd += f" --gitreins={report.spec}"
    if report.seed is not None:
        cmd += f" --hypothesis-seed={report.seed}"
    return cmd


def pick_seed(profile: str, seed: int | None) -> int | None:
    from ctxaudit.profiles import PROFILES

    if seed is not None:
        return seed
    if PROFILES[profile].get("derandomize"):
        return None
    return random.SystemRandom().randrange(2**32)


def previous_elapsed(out_root: Path, target: Target, profile: str) -> float | None:
    """How long the last audit of this target version took (for the progress display)."""
    path = out_root / target.label / "findings.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return float(data["elapsed_s"]) if data.get("profile") == profile else None


def run_mutation(
    target: Target,
    out_root: Path,
    ticker: Ticker | None = None,
    other_sample: float = 1.0,
    peer: bool = True,
    known: list[dict[str, Any]] | None = None,
    only: Sequence[str] = (),
) -> tuple[int, str]:
    """Run the mutation audit of one target version in its own process.

    ``only``: run only the mutants matching these globs (``--since``: the changed
    functions' ``<file>:<function>:*``).

    ``known`` is the properties phase's known-findings result: the regions of the
    findings that affect this version are left out of the mutant runs too, as they
    were for the properties (else a test that meets a known finding fails on the
    unmutated version, is dropped, and its mutants read as survivors).

    ``ticker`` gets "<phase> <done>/<total>, <elapsed>" while it runs; ``peer`` also
    runs the same mutants against the target's own tests where it has some (gitreins).
    """
    out = out_root / target.label
    cmd = [sys.executable, "-m", "mutation", "run", "--target", target.kind, "--out", str(out)]
    cmd += ["--other-sample", str(other_sample), "-q"]
    for glob in only:
        cmd += ["--only", glob]
    if target.kind == "gitreins":
        cmd += ["--gitreins", target.spec]
        if peer:
            cmd.append("--peer")
    with tempfile.TemporaryDirectory(prefix="ctxaudit-") as tmp:
        state = Path(tmp) / "progress.json"
        cmd += ["--progress-file", str(state)]

        started = time.monotonic()
        phase_start: dict[str, float] = {}

        def tick(elapsed: str) -> None:
            if ticker is None:
                return
            try:
                st = json.loads(state.read_text())
            except (OSError, ValueError):
                ticker(elapsed)
                return
            now = time.monotonic()
            began = phase_start.setdefault(st["phase"], now)
            text = f"{st['phase']}"
            if st["phase"] in ("mutants", "peer mutants"):
                text += f" {st['done']}/{st['total']}"
            elif st["phase"] in ("recheck", "seed recheck"):  # survivors, or kills again
                text += f" {st['done']}"
            if st["phase"] == "mutants" and st["done"] >= 10:
                left = (now - began) / st["done"] * (st["total"] - st["done"])
                text += f", ~{left:.0f} s left for them"
            ticker(f"{text} ({now - started:.0f} s)")

        env = dict(os.environ)
        if known is not None and target.kind in KNOWN_FINDINGS_TESTS:
            env["CTXAUDIT_FINDINGS"] = ",".join(k["id"] for k in known if k["affects"]) or "none"
        status, output, _ = run_with_ticker(cmd, env, tick)
    return status, output
