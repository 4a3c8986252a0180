"""The pytest plugin a harness's maintainers use: ``pytest --ctxaudit=SPEC`` runs
ctxaudit's property suites for their target beside the project's own tests.

Registered under ``pytest11`` (installed with ctxaudit); it changes nothing in a run
that does not ask for it. Asked, with ``--ctxaudit=SPEC`` (as ``ctxaudit audit
--target`` takes it: ``gitreins==0.17.1``, a path to the project's own tree,
``lightspeed-stack@REV``, ``ledger``; repeatable) or with a ``[tool.ctxaudit]`` table in
the project's ``pyproject.toml`` (``target``, and optionally ``baseline``), it adds one
test per property of each target version, and one per baseline entry:

- a property passes when it holds, fails when the target breaks it (the failure names
  the property and the findings), and is an error when ctxaudit could not check it
  (its own error, a tree it cannot drive: never a failure of the project);
- with a baseline (``--ctxaudit-baseline=FILE`` or ``baseline`` in the table), a
  property broken only by accepted known findings passes, and an entry that no longer
  reproduces fails, naming the entry (remove it, so that the finding's return fails).

The suites run in one ``ctxaudit audit`` process per session (no mutation, no fix
audit: those are the release audit's), so they never share this process's modules.
Hypothesis' options are passed on: ``--hypothesis-seed`` as the audit's seed, and
``--hypothesis-profile`` when it names one of ctxaudit's profiles.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

_STATE = pytest.StashKey["_Run"]()


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

    def command(self, out: Path) -> list[str]:
        cmd = [sys.executable, "-m", "ctxaudit", "audit", "--no-mutation", "--no-fixes"]
        cmd += ["--no-cache", "--profile", self.profile, "--out", str(out)]
        for spec in self.specs:
            cmd += ["--target", spec]
        if self.seed is not None:
            cmd += ["--seed", self.seed]
        for option in self.options:
            name, _, value = option.partition("=")
            cmd += [f"--{name.lstrip('-')}", value] if value else [f"--{name.lstrip('-')}"]
        return cmd

    def ensure(self) -> None:
        if self.exit_code is not None:
            return
        if self.out is None:
            self.out = Path(tempfile.mkdtemp(prefix="ctxaudit-pytest-"))
        for old in self.out.glob("*/findings.json"):
            old.unlink()  # a report of an earlier session is never read as this one's
        proc = subprocess.run(
            self.command(self.out), cwd=self.rootdir, capture_output=True, text=True, check=False
        )
        self.exit_code = proc.returncode
        self.output = (proc.stdout + proc.stderr).strip()
        for path in self.out.glob("*/findings.json"):
            data = json.loads(path.read_text())
            self.reports[f"{data['target']}-{data['version']}"] = data


def _table(rootdir: Path) -> dict[str, Any]:
    """``[tool.ctxaudit]`` of the project's pyproject.toml (empty when there is none)."""
    path = rootdir / "pyproject.toml"
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise pytest.UsageError(f"ctxaudit: {path}: {exc}") from None
    table = data.get("tool", {}).get("ctxaudit", {})
    return table if isinstance(table, dict) else {}


def pytest_configure(config: pytest.Config) -> None:
    rootdir = Path(str(config.rootpath))
    table = _table(rootdir)
    specs = list(config.getoption("--ctxaudit") or [])
    if not specs:
        target = table.get("target", [])
        specs = [target] if isinstance(target, str) else [str(t) for t in target]
    if not specs:
        return  # not asked for: the run is the project's own, unchanged
    baseline = config.getoption("--ctxaudit-baseline") or table.get("baseline")
    options = list(config.getoption("--ctxaudit-option") or [])
    options += [f"{k}={v}" for k, v in table.get("options", {}).items()]
    seed = config.getoption("--hypothesis-seed", default=None)
    from ctxaudit import profiles

    asked = config.getoption("--hypothesis-profile", default=None)
    profile = asked if asked in profiles.PROFILES else "ci"
    config.stash[_STATE] = _Run(
        specs=specs,
        baseline=(rootdir / baseline) if baseline else None,
        options=[*options, *([f"baseline={rootdir / baseline}"] if baseline else [])],
        rootdir=rootdir,
        seed=None if seed is None else str(seed),
        profile=profile,
        out=config.cache.mkdir("ctxaudit-reports") if config.cache is not None else None,
    )


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    run = config.stash.get(_STATE, None)
    if run is None:
        return
    from ctxaudit import targets

    repos = {t: Path(v) for t, v in _repo_options(run.options).items()}
    for spec in run.specs:
        try:
            described = targets.parse(spec, repos)
        except targets.TargetError as exc:
            raise pytest.UsageError(f"ctxaudit: {exc}") from None
        for d in described:
            for prop, name in targets.get(d.kind).properties.items():
                items.append(
                    PropertyItem.from_parent(
                        session,
                        name=f"{prop} {name}",
                        nodeid=f"ctxaudit/{d.label}::{prop}",
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
            items.append(
                BaselineItem.from_parent(
                    session,
                    name=entry.id,
                    nodeid=f"ctxaudit/baseline::{entry.id}",
                    run=run,
                    entry=entry,
                )
            )


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


class PropertyItem(pytest.Item):
    """One property of one target version."""

    def __init__(self, *, run: _Run, label: str, prop: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.run, self.label, self.prop = run, label, prop

    def setup(self) -> None:
        """Run the audit (once per session); ctxaudit's could-not-check is an error of
        this test's setup, never a failure of the project."""
        self.run.ensure()
        report = self.run.reports.get(self.label)
        if report is None:
            raise CouldNotCheck(f"the audit wrote no report for {self.label} "
                                f"(exit {self.run.exit_code})")  # fmt: skip
        verdict = report["verdicts"].get(self.prop, "not checked")
        if verdict == "could not check":
            raise CouldNotCheck(f"{self.prop}: ctxaudit could not check it on {self.label}")
        self.report = report

    def runtest(self) -> None:
        verdict = self.report["verdicts"].get(self.prop, "not checked")
        if verdict == "holds":
            return
        if verdict == "not checked":
            pytest.skip(f"{self.prop}: not checked on {self.label}")
        accepted = self._accepted()
        new = [f for f in self.report["findings"] if self.prop in f.get("properties", [])]
        known = [k for k in self.report["known"] if k.get("affects") and self._about(k)]
        unaccepted = [k for k in known if k["id"] not in accepted]
        if not new and not unaccepted and known:
            return  # broken only by known findings the project's baseline accepts
        raise PropertyBroken(self._why(new, unaccepted))

    def _about(self, known: dict[str, Any]) -> bool:
        return self.prop in str(known.get("property", "")).split("/")

    def _accepted(self) -> set[str]:
        if self.run.baseline is None:
            return set()
        from ctxaudit.baseline import load

        return set(load(self.run.baseline).ids())

    def _why(self, new: list[dict[str, Any]], known: list[dict[str, Any]]) -> str:
        lines = [f"{self.label} breaks {self.prop}:"]
        lines += [f"  new finding: {f.get('message', '')} ({f.get('test', '')})" for f in new]
        lines += [f"  known finding {k['id']}: {k.get('summary', '')}" for k in known]
        if new and new[0].get("reproduction"):
            lines += ["", "The first new finding's counterexample:", new[0]["reproduction"]]
        if self.run.out is not None:
            lines += ["", f"Report: {self.run.out / self.label / 'findings.md'}"]
        return "\n".join(lines)

    def repr_failure(  # type: ignore[override]
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None
    ) -> str:
        if isinstance(excinfo.value, PropertyBroken | CouldNotCheck):
            tail = "\n".join(self.run.output.splitlines()[-15:])
            return f"{excinfo.value}\n\nctxaudit audit (its last lines):\n{tail}"
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[str, int, str]:
        return "ctxaudit", 0, f"ctxaudit/{self.label}::{self.prop}"


class BaselineItem(pytest.Item):
    """One baseline entry: it fails when the finding no longer reproduces."""

    def __init__(self, *, run: _Run, entry: Any, **kw: Any) -> None:
        super().__init__(**kw)
        self.run, self.entry = run, entry

    def runtest(self) -> None:
        self.run.ensure()
        mine = [r for r in self.run.reports.values() if r["target"] == self.entry.target]
        clean = [r for r in mine if not r["findings"]]
        if not clean:
            pytest.skip(f"no version of {self.entry.target} audited without a new finding")
        if not any(k["id"] == self.entry.id and k.get("affects") for r in mine for k in r["known"]):
            raise PropertyBroken(
                f"baseline entry {self.entry.id} no longer reproduces: remove it from "
                f"{self.run.baseline}, so that the finding's return fails the gate"
            )

    def repr_failure(  # type: ignore[override]
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None
    ) -> str:
        return str(excinfo.value)

    def reportinfo(self) -> tuple[str, int, str]:
        return "ctxaudit", 0, f"ctxaudit/baseline::{self.entry.id}"
