"""The pytest plugin a harness's maintainers use: ``pytest --ctxaudit=SPEC`` runs
ctxaudit's property suites for their target beside the project's own tests.

Registered under ``pytest11`` (installed with ctxaudit); it changes nothing in a run
that does not ask for it. Asked, with ``--ctxaudit=SPEC`` (as ``ctxaudit audit
--target`` takes it: ``gitreins==0.17.1``, a path to the project's own tree,
``lightspeed-stack@REV``, ``ledger``; repeatable) or with a ``[tool.ctxaudit]`` table in
the project's ``pyproject.toml`` (``target``, and optionally ``baseline``), it adds one
test per property of each target version (``ctxaudit/<target>-<version>::<property>``),
and one per baseline entry (``ctxaudit/baseline::<id>``).

The plugin is the audit: the tests run one ``ctxaudit audit --no-mutation --no-fixes``
process per session (in its own process, so the suites never share this process's
modules) and read its reports, judged as the audit judges them:

- a property passes when it holds, fails when the target breaks it, and is an error
  when ctxaudit could not check it (its own error, a tree it cannot drive: never a
  failure of the project); a failure says, once each, the new findings on the
  property and the known findings that break it (a failure the audit attributes to a
  known finding is that finding's, as in ``findings.md``);
- with a baseline (``--ctxaudit-baseline=FILE`` or ``baseline`` in the table), a
  property broken only by known findings it accepts passes; an entry fails when the
  audit finds it no longer reproduces (``ctxaudit.baseline.judge``: remove it, so that
  the finding's return fails) and is an error when its check could not be made.

Selection is pytest's: ``--ctxaudit`` on the command line asks for the tests; from the
``[tool.ctxaudit]`` table they join a run that names no path (the project's whole
suite) or names them (``pytest ctxaudit``, ``pytest ctxaudit/gitreins-0.17.1::V7``);
``-k`` and ``-m`` select among them as among any tests. The audit runs only when one of
its tests runs. Hypothesis' options are passed on: ``--hypothesis-seed`` as the audit's
seed, and ``--hypothesis-profile`` when it names one of ctxaudit's profiles.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ctxaudit.project_table import project_table

_STATE = pytest.StashKey["_Run"]()
#: the first part of the node ids of the plugin's tests, and the argument that names them
PREFIX = "ctxaudit"


class CouldNotCheck(Exception):
    """ctxaudit could not check this property (its own error or a tree it cannot
    drive): reported as an error, never as a failure of the project."""


class PropertyBroken(AssertionError):
    """The target breaks the property."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ctxaudit", "ctxaudit: property suites for the project's target")
    group.addoption(
        "--ctxaudit",
        action="append",
        default=[],
        metavar="SPEC",
        help="run ctxaudit's property suites for this target version (as `ctxaudit audit "
        "--target` takes it); repeatable. Default: [tool.ctxaudit] target in pyproject.toml",
    )
    group.addoption(
        "--ctxaudit-baseline",
        metavar="FILE",
        help="the known findings the project accepts for now (`ctxaudit baseline` writes "
        "it). Default: [tool.ctxaudit] baseline",
    )
    group.addoption(
        "--ctxaudit-option",
        action="append",
        default=[],
        metavar="OPTION=VALUE",
        help="an option passed on to the audit, such as lightspeed-repo=PATH; repeatable",
    )


@dataclass
class _Run:
    """One audit of the asked targets, run when the first of its tests runs."""

    specs: list[str]
    baseline: Path | None
    options: list[str]
    rootdir: Path
    seed: str | None
    profile: str
    #: where the audit writes its reports (pytest's cache folder, else a temporary one)
    out: Path | None = None
    reports: dict[str, dict[str, Any]] = field(default_factory=dict)
    exit_code: int | None = None
    output: str = ""
    #: the baseline's verdict on the reports (``ctxaudit.baseline.judge``), once read
    verdict: Any = None
    #: the node ids of the plugin's tests the command line named (None: not by name)
    named: list[str] | None = None
    #: ``out`` is a temporary folder of this run's (no cache plugin): removed at its end
    temporary: bool = False

    def command(self, out: Path) -> list[str]:
        # -P: the project's folder (where it runs) is not put on the import path, so a
        # module of the project's named ctxaudit is not imported in place of this one
        cmd = [sys.executable, "-P", "-m", "ctxaudit", "audit", "--no-mutation", "--no-fixes"]
        cmd += ["--no-cache", "--profile", self.profile, "--out", str(out)]
        for spec in self.specs:
            cmd += ["--target", spec]
        if self.seed is not None:
            cmd += ["--seed", self.seed]
        if self.baseline is not None:
            cmd += ["--baseline", str(self.baseline)]
        for option in self.options:
            name, _, value = option.partition("=")
            cmd += [f"--{name.lstrip('-')}", value] if value else [f"--{name.lstrip('-')}"]
        return cmd

    def ensure(self) -> None:
        if self.exit_code is not None:
            return
        if self.out is None:
            self.out = Path(tempfile.mkdtemp(prefix="ctxaudit-pytest-"))
            self.temporary = True
        for old in self.out.glob("*/findings.json"):
            old.unlink()  # a report of an earlier session is never read as this one's
        proc = subprocess.run(
            self.command(self.out), cwd=self.rootdir, capture_output=True, text=True, check=False
        )
        self.exit_code = proc.returncode
        self.output = (proc.stdout + proc.stderr).strip()
        for path in self.out.glob("*/findings.json"):
            data = json.loads(path.read_text(encoding="utf-8"))
            self.reports[f"{data['target']}-{data['version']}"] = data
        if self.baseline is not None and self.exit_code in (0, 1, 2):
            from ctxaudit.baseline import judge, load

            self.verdict = judge(
                load(self.baseline), [_as_report(r) for r in self.reports.values()]
            )

    def accepted(self) -> set[str] | None:
        """The ids the baseline accepts (None: no baseline)."""
        if self.baseline is None:
            return None
        from ctxaudit.baseline import load

        return load(self.baseline).ids()

    def crashed(self) -> str | None:
        """Why nothing the audit wrote can be read as its verdict (None: it can). An exit
        other than 0, 1 and 2 (a crash, a signal, bad usage of the audit's own command)
        leaves no verdict, whatever reports it wrote."""
        if self.exit_code in (0, 1, 2):
            return None
        return f"ctxaudit audit ended with exit {self.exit_code}: {_tail(self.output)}"


def _tail(output: str, lines: int = 3) -> str:
    return " | ".join(output.strip().splitlines()[-lines:]) or "(no output)"


def _as_report(data: dict[str, Any]) -> SimpleNamespace:
    """A report as ``ctxaudit.baseline.judge`` reads it (attributes, findings too)."""
    findings = [SimpleNamespace(**f) for f in data.get("findings", [])]
    return SimpleNamespace(**{**data, "findings": findings})


def _named(config: pytest.Config, asked: bool) -> list[str] | None:
    """The plugin's tests the command line names, taken out of pytest's own arguments
    (no file holds them): ``[]`` for all of them when the run names no path at all or
    ``--ctxaudit`` asked for them, None for none of them (the paths named are the
    project's own)."""
    explicit = config.args_source == pytest.Config.ArgsSource.ARGS
    here = Path(config.invocation_params.dir)
    mine = [
        a
        for a in config.args
        if (a == PREFIX or a.startswith(PREFIX + "/"))
        and not (here / a.partition("::")[0]).exists()  # a folder of the project's own
    ]
    if mine:
        config.args[:] = [a for a in config.args if a not in mine]
        return [] if PREFIX in mine else mine
    return [] if asked or not explicit else None


#: the marker a target's own suite (a harness's, hooked in as docs/targets.md says)
#: names its properties with; registered for every run, so that a project's
#: ``--strict-markers`` or its warnings never trip on it
MARKER = "properties(*ids): the properties a test checks (B1, V3, S5 ...: ctxaudit's catalogue)"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER)
    rootdir = Path(str(config.rootpath))
    table = project_table(rootdir)
    specs = list(config.getoption("--ctxaudit") or [])
    asked = bool(specs)
    if not specs:
        target = table.get("target", [])
        specs = [target] if isinstance(target, str) else [str(t) for t in target]
    if not specs:
        return  # not asked for: the run is the project's own, unchanged
    named = _named(config, asked)
    if named is None:
        return  # the run names the project's own paths only: the audit is not selected
    baseline = config.getoption("--ctxaudit-baseline") or table.get("baseline")
    options = list(config.getoption("--ctxaudit-option") or [])
    options += [f"{k}={v}" for k, v in table.get("options", {}).items()]
    seed = config.getoption("--hypothesis-seed", default=None)
    from ctxaudit import profiles

    asked_profile = config.getoption("--hypothesis-profile", default=None)
    profile = asked_profile if asked_profile in profiles.PROFILES else "ci"
    cache = getattr(config, "cache", None)  # None under -p no:cacheprovider
    config.stash[_STATE] = _Run(
        specs=specs,
        baseline=(rootdir / baseline) if baseline else None,
        options=options,
        rootdir=rootdir,
        seed=None if seed is None else str(seed),
        profile=profile,
        out=cache.mkdir("ctxaudit-reports") if cache is not None else None,
        named=named or None,
    )


def pytest_report_collectionfinish(
    config: pytest.Config, start_path: Path, items: list[pytest.Item]
) -> str | None:
    """pytest's "collected N items" counts the project's tests only (the audit's are
    added after): say how many of those selected are the audit's."""
    if config.stash.get(_STATE, None) is None:
        return None
    mine = sum(1 for item in items if isinstance(item, PropertyItem))
    return f"ctxaudit: {mine} of the {len(items)} selected test(s) are the audit's properties"


@pytest.hookimpl(tryfirst=True)  # before -k, -m and --deselect select among all tests
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    run = config.stash.get(_STATE, None)
    if run is None:
        return
    from ctxaudit import targets

    mine: list[pytest.Item] = []
    repos = {t: Path(v) for t, v in _repo_options(run.options).items()}
    for spec in run.specs:
        try:
            described = targets.parse(spec, repos)
        except targets.TargetError as exc:
            raise pytest.UsageError(f"ctxaudit: {exc}") from None
        for d in described:
            for prop, name in targets.get(d.kind).properties.items():
                mine.append(
                    PropertyItem.from_parent(
                        session,
                        name=f"{prop} {name}",
                        nodeid=f"{PREFIX}/{d.label}::{prop}",
                        run=run,
                        label=d.label,
                        prop=prop,
                    )  # fmt: skip
                )
    if run.baseline is not None:
        from ctxaudit.baseline import BaselineError, load

        try:
            entries = load(run.baseline).entries
        except BaselineError as exc:
            raise pytest.UsageError(f"ctxaudit: {exc}") from None
        for entry in entries:
            mine.append(
                BaselineItem.from_parent(
                    session,
                    name=entry.id,
                    nodeid=f"{PREFIX}/baseline::{entry.id}",
                    run=run,
                    entry=entry,
                )  # fmt: skip
            )
    if run.named:
        mine = [i for i in mine if any(_names(arg, i.nodeid) for arg in run.named)]
    items.extend(mine)


def _names(arg: str, nodeid: str) -> bool:
    """A command-line argument names this test: its node id, or a part of it ending at
    a ``/`` or ``::`` (``ctxaudit/gitreins-0.17.1`` names that version's tests)."""
    arg = arg.rstrip("/")
    return nodeid == arg or nodeid.startswith((arg + "/", arg + "::"))


def _repo_options(options: list[str]) -> dict[str, str]:
    """target name -> repository, from ``--ctxaudit-option`` values that are a target's
    repository option (``lightspeed-repo=PATH``)."""
    from ctxaudit import targets

    given = {o.partition("=")[0].lstrip("-"): o.partition("=")[2] for o in options}
    return {
        t.name: given[t.repo.option.lstrip("-")]
        for t in targets.all_targets()
        if t.repo is not None and t.repo.option.lstrip("-") in given
    }


def judge_property(report: dict[str, Any], prop: str, accepted: set[str] | None) -> tuple[str, str]:
    """One property of one version's report, as the audit judges it: (``holds``,
    ``fails``, ``could not check`` or ``not checked``; what to say). ``accepted``: the
    known findings the baseline accepts (None: no baseline), which make a property
    broken only by them hold.

    The known findings that break the property are those that reproduce on it and the
    owners of the failures the audit attributed to a known finding; each failure is
    said once: a new one with its counterexample, an attributed one under its owner."""
    label = f"{report['target']}-{report['version']}"
    verdict = report.get("verdicts", {}).get(prop, "not checked")
    if verdict == "holds":
        return "holds", ""
    if verdict == "not checked":
        return "not checked", f"{prop}: no test checks it on {label}"
    if verdict == "could not check":
        whys = [u["why"] for u in report.get("unchecked", []) if prop in u.get("properties", [])]
        why = "; ".join(dict.fromkeys(whys)) or "see its report"
        return "could not check", f"{prop}: ctxaudit could not check it on {label}: {why}"
    new = [f for f in report.get("findings", []) if prop in f.get("properties", [])]
    known: dict[str, list[dict[str, Any]]] = {}  # id -> the failures it explains
    for k in report.get("known", []):
        if k.get("affects") and prop in str(k.get("property", "")).split("/"):
            known.setdefault(k["id"], [])
    for f in report.get("attributed", []):
        if prop in f.get("properties", []):
            for owner in f.get("owners", [])[:1]:
                known.setdefault(owner, []).append(f)
    unaccepted = [k for k in known if accepted is None or k not in accepted]
    if not new and not unaccepted and known:
        return "holds", f"{prop}: broken only by accepted known findings {', '.join(known)}"
    summaries = {k["id"]: k.get("summary", "") for k in report.get("known", [])}
    lines = [f"{label} breaks {prop}:"]
    for f in new:
        lines += ["", f"new finding: {f.get('message', '')}", f"  test: {f.get('test', '')}"]
        if f.get("reproduction"):
            lines += ["  " + ln for ln in str(f["reproduction"]).splitlines()]
        # the commands that run it again, as its report prints them (from any folder)
        lines += [f"  {said}: {f[k]}" for said, k in (("rerun", "command"), ("replay", "replay"))
                  if f.get(k)]  # fmt: skip
    for fid, explained in known.items():
        said = " (accepted by the baseline)" if accepted is not None and fid in accepted else ""
        lines += ["", f"known finding {fid}{said}: {summaries.get(fid, '')}"]
        for f in explained:
            lines += [f"  explains: {f.get('message', '')} ({f.get('test', '')})"]
    if not new and not known:  # the audit says it fails, and names nothing: say so
        lines += ["", "the audit's report names no finding on it"]
    return "fails", "\n".join(lines)


class PropertyItem(pytest.Item):
    """One property of one target version."""

    def __init__(self, *, run: _Run, label: str, prop: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.run, self.label, self.prop = run, label, prop
        self.extra_keyword_matches.update({PREFIX, label})  # -k ctxaudit, -k gitreins-0.17.1

    def setup(self) -> None:
        """Run the audit (once per session); ctxaudit's could-not-check is an error of
        this test's setup, never a failure of the project."""
        self.run.ensure()
        crashed = self.run.crashed()
        if crashed:
            raise CouldNotCheck(crashed)
        report = self.run.reports.get(self.label)
        if report is None:
            raise CouldNotCheck(
                f"the audit wrote no report for {self.label} (exit {self.run.exit_code}): "
                + _tail(self.run.output)
            )
        self.outcome, self.text = judge_property(report, self.prop, self.run.accepted())
        if self.outcome == "could not check":
            raise CouldNotCheck(self.text)

    def runtest(self) -> None:
        if self.outcome == "not checked":
            pytest.skip(self.text)
        if self.outcome == "fails":
            report = "" if self.run.out is None else str(self.run.out / self.label / "findings.md")
            raise PropertyBroken(self.text + (f"\n\nReport: {report}" if report else ""))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, PropertyBroken | CouldNotCheck):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[str, int, str]:
        return PREFIX, 0, f"{PREFIX}/{self.label}::{self.prop}"


class BaselineItem(pytest.Item):
    """One baseline entry: it fails when the audit finds it no longer reproduces."""

    def __init__(self, *, run: _Run, entry: Any, **kw: Any) -> None:
        super().__init__(**kw)
        self.run, self.entry = run, entry
        self.extra_keyword_matches.update({PREFIX, "baseline"})

    def setup(self) -> None:
        self.run.ensure()
        crashed = self.run.crashed()
        if crashed:
            raise CouldNotCheck(crashed)
        verdict = self.run.verdict
        why = dict((e.id, w) for e, w in getattr(verdict, "unchecked", []))
        if self.entry.id in why:
            raise CouldNotCheck(
                f"baseline entry {self.entry.id}: ctxaudit could not check whether it "
                f"reproduces: {why[self.entry.id]}"
            )

    def runtest(self) -> None:
        verdict = self.run.verdict
        if any(e.id == self.entry.id for e in verdict.stale):
            raise PropertyBroken(
                f"baseline entry {self.entry.id} no longer reproduces: remove it from "
                f"{self.run.baseline}, so that the finding's return fails the gate"
            )
        reproduces = any(self.entry.id in ids for ids in verdict.accepted.values())
        if not reproduces:
            audited = any(r["target"] == self.entry.target for r in self.run.reports.values())
            pytest.skip(
                f"baseline entry {self.entry.id}: every audited version of "
                f"{self.entry.target} has a new finding, which can keep its check from "
                "showing it"
                if audited
                else f"baseline entry {self.entry.id}: {self.entry.target} is not audited here"
            )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, PropertyBroken | CouldNotCheck):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[str, int, str]:
        return PREFIX, 0, f"{PREFIX}/baseline::{self.entry.id}"


def _unexplained(run: _Run) -> bool:
    """The audit did not check everything (exit 2), and none of its tests says what: no
    report with a property or a known finding it could not check, no baseline entry it
    could not judge. Its tests may all pass; the run must not."""
    if run.exit_code != 2:
        return False
    for report in run.reports.values():
        if report.get("unchecked") or "could not check" in report.get("verdicts", {}).values():
            return False
    return not getattr(run.verdict, "unchecked", None) and bool(run.reports)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    run = session.config.stash.get(_STATE, None)
    if run is not None and _unexplained(run) and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_unconfigure(config: pytest.Config) -> None:
    """The reports' temporary folder (no cache plugin) goes with the run."""
    run = config.stash.get(_STATE, None)
    if run is not None and run.temporary and run.out is not None:
        shutil.rmtree(run.out, ignore_errors=True)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """The audit's last lines, once, when it did not check everything (its exit 2, or
    a crash): what the errors above come from."""
    run = config.stash.get(_STATE, None)
    if run is None or run.exit_code in (None, 0, 1):
        return
    terminalreporter.section(f"ctxaudit audit (exit {run.exit_code}): its last lines")
    for line in run.output.splitlines()[-15:]:
        terminalreporter.write_line(line)
    if _unexplained(run):
        terminalreporter.write_line(
            "ctxaudit: COULD NOT CHECK everything, and no test above says what (see the "
            "audit's lines): the run fails", red=True,
        )  # fmt: skip
