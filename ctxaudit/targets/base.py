"""What a target is: the one interface the audit (and the mutation runner) ask.

A *target* is an implementation ctxaudit checks against the model (gitreins, the
ledger, lightspeed-stack). Each is one object that satisfies :class:`Target`, kept with
everything else specific to it in its own folder under ``ctxaudit/targets/`` and
registered by one line in ``ctxaudit/targets/__init__.py``. What it answers:

- **resolve a spec**: :meth:`Target.claims` (is this ``--target`` spec mine?),
  :meth:`Target.expand` (the versions a spec names, a range included, as
  :class:`Described`, without fetching them) and :meth:`Target.resolve` (one version
  on disk, fetched or checked out if needed, as :class:`Resolved`);
- **build or load**: :meth:`Target.load` (import it in this process, or build the
  environment it runs in) and :meth:`Target.suite_process` (the interpreter and
  environment its suites run in);
- **mutation scope**: :attr:`Target.mutation` (its ``mutation.toml`` and the folder
  the mutation runner copies), ``None`` when it is not mutated;
- **pytest options**: :attr:`Target.pytest_options` (how a suite run names the
  version it checks; a replay command repeats them);
- **findings registry**: :meth:`Target.findings` (its known findings),
  :attr:`Target.findings_registry` (the file they are registered in) and
  :meth:`Target.findings_check` (how the audit learns which reproduce on a version),
  :meth:`Target.left_out` (the findings its suites leave out by default) and
  :attr:`Target.fixes_package` (the package that holds a fix for each);
- **peer suite**: :meth:`Target.peer_suite` (the target's own tests, where it has some);
- **applicable properties**: :attr:`Target.properties` and :attr:`Target.suites` (the
  lockstep suites that check them);
- **fix audit** (where :attr:`Target.fix_audit`): :meth:`Target.fix_version` (the name
  a fix's forms are matched against), :meth:`Target.copy_env` (the environment that
  leaves out given findings' regions in a run of a copy of the version) and
  :attr:`Target.fixed_suites` (what runs on the fully fixed tree).

This module imports nothing of ctxaudit: the targets' modules, the audit and
``mutation/`` all build on it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable


class TargetError(Exception):
    """A spec that names no usable target version. Its message is one clear line."""


@dataclass
class Described:
    """One version of a target, named by a spec before anything is fetched: what the
    audit runs (one process per version) and reports (``reports/<label>/``)."""

    kind: str  # the target's registered name: "gitreins" | "ledger" | "lightspeed-stack"
    spec: str  # what the target resolves again (its suites are given it)
    version: str
    repo: Path | None = None  # the repository the spec is resolved in, where it needs one

    @property
    def label(self) -> str:
        return f"{self.kind}-{self.version}"


@dataclass(frozen=True)
class Resolved:
    """One version of a target on disk."""

    name: str  # the target's registered name
    version: str
    root: Path  # the folder that holds the target's code (a source tree, a checkout)
    spec: str  # a spec that resolves to this version again
    #: the folder under :attr:`mutation_root` the mutation runner copies and mutates
    #: (``engine``, ``ledger``; ``.`` for all of it); None for a target not mutated
    copy_dir: str | None = None
    #: where, under ``root``, the mutated code's import root is (lightspeed-stack: ``src``)
    source_root: str = ""
    commit: str | None = None  # for a version taken from a git repository
    #: the target module's own description (GitreinsTree, LightspeedTree ...)
    tree: Any = field(default=None, compare=False, repr=False)

    @property
    def label(self) -> str:
        return f"{self.name}-{self.version}"

    @property
    def mutation_root(self) -> Path:
        """The folder the mutation runner copies ``copy_dir`` of (``root / source_root``)."""
        return self.root / self.source_root if self.source_root else self.root


@dataclass(frozen=True)
class PytestOption:
    """A pytest option of a target's suites (``--gitreins=SPEC``): registered by ctxaudit's
    pytest setup, repeated by a replay command when it is given."""

    name: str  # "--gitreins"
    help: str
    metavar: str = "SPEC"
    #: a value is resolved (``Target.resolve``) before anything runs: a bad one is a
    #: usage error of one line, not a test failure
    resolves: bool = False


@dataclass(frozen=True)
class RepoOption:
    """The repository a target's specs are resolved in (lightspeed-stack's git
    repository): the command lines' option that names it, else an environment variable."""

    option: str  # "--lightspeed-repo", in the audit's and the mutation runner's CLI
    env: str  # the environment variable read when the option is not given
    help: str

    @property
    def dest(self) -> str:
        """The option's argparse destination."""
        return self.option.lstrip("-").replace("-", "_")

    def value(self, given: str | None) -> Path | None:
        """The repository: the option's value if given, else the environment's."""
        chosen = (given or "").strip() or os.environ.get(self.env, "").strip()
        return Path(chosen).expanduser() if chosen else None


@dataclass(frozen=True)
class MutationScope:
    """What the mutation runner mutates of a target."""

    section: str  # the target's table in its mutation.toml (``[<section>]``)
    copy_dir: str  # the folder under the mutation root that is copied and mutated
    source_root: str = ""  # the mutation root under the resolved root ("" = the root)
    #: the ``python -m mutation run`` option that passes the spec (None: not passed)
    spec_option: str | None = None
    peer: bool = False  # it has a peer suite (its own tests) to compare with
    #: ``ctxaudit audit`` runs the mutation audit for it (else only ``python -m mutation``)
    audited: bool = True
    #: the file that configures it (mutation/config.py describes the format)
    config: Path | None = None
    #: the ``python -m mutation run`` help of :attr:`spec_option`
    spec_help: str = "the version to mutate"


@dataclass(frozen=True)
class KnownFinding:
    """A known finding as the audit reports it (``findings.json``'s ``known``)."""

    id: str
    property: str  # "B6", or "S1/S6" when one break fails several
    summary: str
    region: str  # in words
    repro: str  # the pytest node id that reproduces it


@dataclass(frozen=True)
class FindingsCheck:
    """How the audit learns which known findings reproduce on a version: run ``paths``
    with ``env`` (one pytest process, ``ci`` profile), then ``read`` the tests'
    outcomes (node id -> outcome) into the ``known`` entries (:func:`known_entry`)."""

    paths: Sequence[str]
    env: Mapping[str, str]
    read: Callable[[Mapping[str, str]], list[dict[str, Any]]]


def known_entry(f: KnownFinding, *, registered: bool, affects: bool) -> dict[str, Any]:
    """One entry of a report's ``known`` list (the keys in the order reports show)."""
    return {
        "id": f.id,
        "property": f.property,
        "summary": f.summary,
        "region": f.region,
        "repro": f.repro,
        "registered": registered,
        "affects": affects,
    }


@runtime_checkable
class Target(Protocol):
    """One target. See the module docstring; :class:`BaseTarget` has the defaults."""

    name: str
    #: the properties that apply to it: id -> short name, in report order
    properties: Mapping[str, str]
    #: the lockstep suites (pytest paths) that check them
    suites: Sequence[str]
    #: tests under ``suites`` about the suite itself (release history), not one version
    suite_ignores: Sequence[str]
    findings_registry: str  # the file its known findings are registered in
    #: the package with a fix module for each known finding (``ctxaudit.fixes``), or None
    fixes_package: str | None
    mutation: MutationScope | None
    #: the pytest options its suites take
    pytest_options: Sequence[PytestOption]
    #: the repository its specs are resolved in, where it has one
    repo: RepoOption | None
    #: its suites leave out the regions of the findings named in CTXAUDIT_FINDINGS
    excludes_known: bool
    fix_audit: bool  # the fix audit (its fixes_package) applies to it
    #: the suites the fix audit runs on the fully fixed tree (None: :attr:`suites`)
    fixed_suites: Sequence[str] | None
    spec_forms: str  # the spec forms it takes, for error messages and help
    #: the spec ``ctxaudit audit`` checks when no ``--target`` is given (None: not by default)
    default_spec: str | None
    #: a path spec no target claims is its to explain (the error names what is missing)
    takes_paths: bool

    def claims(self, spec: str) -> bool:
        """The spec names this target (its name, or a path to one of its trees)."""
        ...

    def expand(self, spec: str, repo: Path | None = None) -> list[Described]:
        """The versions a spec names (a range gives several), not fetched yet.
        Raises TargetError."""
        ...

    def resolve(self, spec: str | None = None, repo: Path | None = None) -> Resolved:
        """One version on disk (fetched or checked out if needed). Raises TargetError."""
        ...

    def load(self, resolved: Resolved) -> object:
        """Import it in this process, or build what it runs in."""
        ...

    def findings(self) -> list[KnownFinding]:
        """Its known findings, every version's."""
        ...

    def findings_check(self, target: Described, tmp: Path) -> FindingsCheck | None:
        """How to learn which known findings reproduce on ``target`` (None: it has no
        regression tests for them). ``tmp`` is a folder for the run's files."""
        ...

    def left_out(self, version: str) -> list[str]:
        """The ids of the findings whose regions its suites leave out on ``version``
        when ``CTXAUDIT_FINDINGS`` is unset (where :attr:`excludes_known`)."""
        ...

    def peer_suite(self, resolved: Resolved) -> Path | None:
        """A folder with the target's own ``tests/`` for this version, or None."""
        ...

    def suite_args(self, spec: str) -> list[str]:
        """pytest arguments that point its suites at this spec."""
        ...

    def suite_process(self, target: Described, tmp: Path) -> tuple[str, dict[str, str]] | None:
        """(python, environment) its suites run under; None: this interpreter and
        ``os.environ``."""
        ...

    def rerun_args(self, nodeid: str, spec: str) -> list[str]:
        """``bin/ctxaudit test`` arguments that rerun one test of its suites."""
        ...

    def fix_version(self, resolved: Resolved) -> str:
        """The name of this version that a fix's forms are matched against
        (``ctxaudit.fixes.Form.applies``: a version, a tag or a commit)."""
        ...

    def copy_env(self, resolved: Resolved, leave_out: Sequence[str]) -> dict[str, str]:
        """The environment of a suite run on a copy of ``resolved`` (a fixed copy in
        the fix audit) that leaves out exactly the regions of the findings ``leave_out``
        and reads the copy as that version."""
        ...

    def attribute_args(self, spec: str, version: str) -> list[str]:
        """How ``bin/ctxaudit attribute`` names this version (the arguments that
        resolve it again)."""
        ...

    def code_paths(self, resolved: Resolved) -> list[Path]:
        """The files and folders that are this version's code: what the audit's step
        cache hashes (``ctxaudit/result_cache.py``); never a folder the audit writes."""
        ...

    def history(self, version: str) -> tuple[str, tuple[Any, ...]]:
        """Where a version (as reports name it) sits in the target's history: its line
        (a release branch; "" for a target with one line) and its order on that line.
        The matrix orders versions by it and compares only neighbours on one line."""
        ...


class BaseTarget:
    """Defaults for the parts of :class:`Target` that most targets do not need."""

    name = ""
    properties: Mapping[str, str] = {}
    suites: Sequence[str] = ()
    suite_ignores: Sequence[str] = ()
    findings_registry = ""
    fixes_package: str | None = None
    mutation: MutationScope | None = None
    pytest_options: Sequence[PytestOption] = ()
    repo: RepoOption | None = None
    excludes_known = False
    fix_audit = False
    fixed_suites: Sequence[str] | None = None
    spec_forms = ""
    default_spec: str | None = None
    takes_paths = False
    #: the modules every suite process of the target imports before its first test:
    #: imported once per environment by a warm interpreter that forks each run
    #: (``ctxaudit/warm.py``); one an environment lacks is skipped
    preload: Sequence[str] = ("pytest", "hypothesis")
    #: the concerns whose shared suites check it (``ctxaudit/targets/concern_suites``):
    #: concern -> ``"module:attribute"``, a callable that takes the resolved version
    #: and returns its adapter; its ``suites`` are then ``suites_for(concerns)``
    concerns: Mapping[str, str] = {}

    def claims(self, spec: str) -> bool:
        return spec == self.name

    def expand(self, spec: str, repo: Path | None = None) -> list[Described]:
        r = self.resolve(spec, repo)
        return [Described(self.name, r.spec, r.version, repo)]

    def resolve(self, spec: str | None = None, repo: Path | None = None) -> Resolved:
        raise TargetError(f"{self.name}: cannot resolve {spec!r}")

    def load(self, resolved: Resolved) -> object:
        return None

    def findings(self) -> list[KnownFinding]:
        return []

    def findings_check(self, target: Described, tmp: Path) -> FindingsCheck | None:
        return None

    def left_out(self, version: str) -> list[str]:
        return []

    def peer_suite(self, resolved: Resolved) -> Path | None:
        return None

    def suite_args(self, spec: str) -> list[str]:
        if self.concerns:  # the shared suites find its adapter and the version so; run
            # from any folder (a printed rerun), they need ctxaudit's pytest setup named
            plugin = ["-p", "ctxaudit.pytest_plugin"]
            return [*plugin, f"--concern-target={self.name}", f"--concern-spec={spec}"]
        return []

    def suite_process(self, target: Described, tmp: Path) -> tuple[str, dict[str, str]] | None:
        return None

    def rerun_args(self, nodeid: str, spec: str) -> list[str]:
        return [f"'{nodeid}'", *self.suite_args(spec)]

    def fix_version(self, resolved: Resolved) -> str:
        return resolved.version

    def copy_env(self, resolved: Resolved, leave_out: Sequence[str]) -> dict[str, str]:
        return {"CTXAUDIT_FINDINGS": ",".join(leave_out) or "none"}

    def attribute_args(self, spec: str, version: str) -> list[str]:
        return ["--target", f"{self.name}=={version}"]

    def code_paths(self, resolved: Resolved) -> list[Path]:
        return [resolved.root]

    def history(self, version: str) -> tuple[str, tuple[Any, ...]]:
        return "", release_order(version)


def release_order(version: str) -> tuple[Any, ...]:
    """PEP 440 order, then versions that are not PEP 440 (``git-<sha>``) by text."""
    from packaging.version import InvalidVersion, Version

    try:
        return (0, Version(version), "")
    except InvalidVersion:
        return (1, Version("0"), version)


class _Registrable(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def versions(self) -> frozenset[str]: ...


_F = TypeVar("_F", bound=_Registrable)


def registered_for(findings: Sequence[_F], version: str) -> list[_F]:
    """The findings registered for ``version``; ``CTXAUDIT_FINDINGS`` overrides for one
    run (``all``, or a comma-separated list of ids; ``none``: none)."""
    override = os.environ.get("CTXAUDIT_FINDINGS")
    if override is not None:
        ids = {i.strip() for i in override.split(",") if i.strip()}
        return [f for f in findings if "all" in ids or f.id in ids]
    return [f for f in findings if version in f.versions]


_S = TypeVar("_S")


@dataclass(frozen=True)
class ReleaseFinding(Generic[_S]):
    """A finding of a target audited by release (the PyPI libraries): where a release
    breaks a property. Each names the property, the releases it is registered for, the
    doc line it breaks, the narrowest region where it shows (a predicate over the
    target's lockstep step ``_S``, which the lockstep uses to leave exactly that region
    out) and its regression test, which asserts the finding still reproduces (so it
    fails when the release is fixed)."""

    id: str
    versions: frozenset[str]  # registered for
    prop: str
    summary: str
    breaks: str  # the doc line it breaks, quoted, with where it is
    region: str  # in words
    in_region: Callable[[_S], bool]
    repro: str  # the regression test's pytest node id


def first_in_region(findings: Sequence[ReleaseFinding[_S]], step: _S) -> str | None:
    """The id of the first of ``findings`` whose region ``step`` is in, if any."""
    return next((f.id for f in findings if f.in_region(step)), None)


def never(_: object) -> bool:
    """The region of a finding the lockstep never reaches (its program checks it)."""
    return False
