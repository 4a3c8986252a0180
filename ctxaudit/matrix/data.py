"""The release-audit matrix's data types: a target version's report as the matrix reads
it, what changed between two versions, each known finding across the versions, and the
matrix itself. :mod:`ctxaudit.matrix.model` fills them from the reports on disk."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxaudit import targets
from ctxaudit.audit import PROPERTIES
from ctxaudit.outcomes import COULD_NOT_CHECK, FAILS, HOLDS, NOT_CHECKED
from ctxaudit.targets.base import release_order

#: verdict -> (symbol, css class); the word itself is always shown too. "could not
#: check" (ctxaudit's own error, a tree it cannot drive) is neither holds nor fails
MARKS = {
    HOLDS: ("✓", "holds"),
    FAILS: ("✗", "fails"),
    COULD_NOT_CHECK: ("?", "cnc"),
    NOT_CHECKED: ("–", "nc"),
}
VERDICTS = frozenset(MARKS)
#: mutation kinds in display order (docs/properties.md, section 4); other names sort after these
KIND_ORDER = ("removed-write", "wrong-comparison", "other")
#: mutation-testing-elements status -> status name used by ``mutation.report.score``.
#: CompileError, RuntimeError and Pending are left out of the score (as in Stryker).
MTE_TO_STATUS = {
    "Killed": "killed",
    "Timeout": "timeout",
    "Survived": "survived",
    "NoCoverage": "no-coverage",
    "Ignored": "equivalent",
}


class MatrixError(ValueError):
    """A report folder that cannot be read (one line, names the file)."""


@dataclass(frozen=True)
class Skipped:
    """A report the matrix left out: it cannot be read or does not hold the expected
    shape (a truncated or foreign file). ``dir`` is its version folder."""

    dir: Path
    file: str
    why: str


@dataclass(frozen=True)
class Unchecked:
    """What ctxaudit could not check on a version (``findings.json`` ``unchecked``)."""

    nodeid: str
    properties: tuple[str, ...]
    why: str


# --------------------------------------------------------------------------- model


@dataclass(frozen=True)
class KnownFinding:
    id: str
    prop: str
    summary: str
    region: str
    repro: str
    registered: bool
    affects: bool
    could_not_check: str = ""  # why its check said neither (then ``affects`` is False)
    #: the command that runs its regression test on the version (passes while it
    #: reproduces); a report of an older ctxaudit has none: its node id is shown
    reproduce: str = ""


@dataclass(frozen=True)
class NewFinding:
    properties: tuple[str, ...]
    message: str
    test: str
    reproduction: str


@dataclass(frozen=True)
class FixState:
    """A known finding's fix on one version (``findings.json`` ``fixes``, the fix audit)."""

    id: str
    prop: str
    status: str  # "fix verified", "not needed", "no fix", "does not apply", ...
    detail: str
    patch: str  # relative to the version's folder, "" when none was written


@dataclass(frozen=True)
class FixedTree:
    """The fully fixed tree of one version (``findings.json`` ``fixed``)."""

    applied: tuple[str, ...]
    combined_patch: str  # relative to the version's folder, "" when no fix applied
    failing: tuple[str, ...]  # properties that fail on it
    remaining: int  # failures on it
    ok: bool
    elapsed_s: float
    seeds: tuple[int | None, ...] = ()  # the seeds it ran under (more than one: each)


@dataclass(frozen=True)
class KindScore:
    kind: str
    total: int
    detected: int  # Killed + Timeout
    undetected: int  # Survived + NoCoverage
    equivalent: int  # Ignored: listed in mutation/equivalent.toml, out of the score
    score: float | None  # percent, None when no mutant counts


@dataclass(frozen=True)
class MutationSummary:
    kinds: dict[str, KindScore]  # display order
    overall: KindScore
    gate_passed: bool | None
    gate_failures: int
    json_path: Path
    md_path: Path | None
    #: the same mutants against the target's own tests (mutation.json config.peer)
    peer: dict[str, Any] | None = None
    #: the fixes applied to the mutated tree (``--mutate fixed``); empty: the released one
    fixes: tuple[str, ...] = ()


@dataclass
class VersionReport:
    target: str
    version: str
    dir: Path
    profile: str
    seed: int | None
    elapsed_s: float
    exit_status: int
    ok: bool
    verdicts: dict[str, str]
    known: list[KnownFinding]
    findings: list[NewFinding]
    mutation: MutationSummary | None = None
    #: the fix audit: each known finding's fix, the failures attributed to known
    #: findings (their count), the fully fixed tree; empty/0/None without one
    fixes: list[FixState] = field(default_factory=list)
    attributed: int = 0
    #: the properties those attributed failures break
    attributed_props: tuple[str, ...] = ()
    fixed: FixedTree | None = None
    unchecked: list[Unchecked] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.target} {self.version}"

    @property
    def failing(self) -> list[str]:
        return [p for p, v in self.verdicts.items() if v == FAILS]

    @property
    def cannot_check(self) -> list[str]:
        """The properties ctxaudit could not check on this version."""
        return [p for p, v in self.verdicts.items() if v == COULD_NOT_CHECK]

    @property
    def outcome(self) -> str:
        """fails (the target breaks a property), else could not check (ctxaudit could
        not check something: a property, a known finding's check, the suite), else
        holds; as ``TargetReport.outcome``."""
        if self.failing:
            return FAILS
        if self.unchecked or self.cannot_check or (self.suite_error and not self.ok):
            return COULD_NOT_CHECK
        return HOLDS

    @property
    def affecting(self) -> list[KnownFinding]:
        return [k for k in self.known if k.affects]

    @property
    def suite_error(self) -> bool:
        return self.exit_status not in (0, 1)

    def known_state(self, finding_id: str) -> bool | None:
        """True affects, False checked and does not reproduce, None not checked."""
        for k in self.known:
            if k.id == finding_id:
                return None if k.could_not_check else k.affects
        return None


@dataclass(frozen=True)
class Change:
    """What changed from one version of a target to the next."""

    target: str
    before: str
    after: str
    appeared: list[str]  # known findings that affect ``after`` but not ``before``
    fixed: list[str]  # known findings that affect ``before`` but not ``after``
    verdicts: list[tuple[str, str, str]]  # (property, verdict before, verdict after)
    new_findings: tuple[int, int]
    scores: list[tuple[str, float | None, float | None]]  # per kind, when both ran mutation

    @property
    def empty(self) -> bool:
        return not (
            self.appeared
            or self.fixed
            or self.verdicts
            or self.scores
            or self.new_findings[0] != self.new_findings[1]
        )


@dataclass(frozen=True)
class KnownRow:
    """One known finding across the versions of its target."""

    target: str
    id: str
    prop: str
    summary: str
    states: dict[str, bool | None]  # version -> affects / does not reproduce / not checked
    registered: list[str]

    @property
    def affected(self) -> list[str]:
        return [v for v, s in self.states.items() if s]

    def runs(self) -> list[tuple[str, str, str | None]]:
        """Contiguous runs of affected versions on one line of the target's history:
        (first, last, the next version on that line when it does not reproduce, else
        None)."""
        out: list[tuple[str, str, str | None]] = []
        versions = list(self.states)
        line = {v: history(self.target, v)[0] for v in versions}
        i = 0
        while i < len(versions):
            if not self.states[versions[i]]:
                i += 1
                continue
            j = i
            while (
                j + 1 < len(versions)
                and self.states[versions[j + 1]]
                and line[versions[j + 1]] == line[versions[i]]
            ):
                j += 1
            nxt = versions[j + 1] if j + 1 < len(versions) else None
            on_line = nxt is not None and line[nxt] == line[versions[i]]
            fixed = nxt if on_line and nxt is not None and self.states[nxt] is False else None
            out.append((versions[i], versions[j], fixed))
            i = j + 1
        return out


@dataclass
class Matrix:
    versions: list[VersionReport]
    changes: list[Change] = field(default_factory=list)
    known: list[KnownRow] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)  # reports left out, and why

    @property
    def targets(self) -> list[str]:
        return list(dict.fromkeys(v.target for v in self.versions))

    def of(self, target: str) -> list[VersionReport]:
        return [v for v in self.versions if v.target == target]

    def properties(self, target: str) -> list[str]:
        """The target's properties in the audit's order, then any others a report names."""
        names = list(PROPERTIES.get(target, {}))
        for v in self.of(target):
            names += [p for p in v.verdicts if p not in names]
        return names


def history(target: str, version: str) -> tuple[str, tuple[Any, ...]]:
    """A version's line and its order on it, as its target says
    (``Target.history``); one line in release order for a target the registry does
    not know."""
    if target in targets.names():
        return targets.get(target).history(version)
    return "", release_order(version)


def version_key(target: str, version: str) -> tuple[Any, ...]:
    """Sort key: the registered targets in registration order, then targets the registry
    does not know (by name); within a target its history: line by line (in release
    order, ``main`` last), each in its own order."""
    order = targets.names()
    rank = order.index(target) if target in order else len(order)
    line, on_line = history(target, version)
    return (rank, target, line == "main", release_order(line) if line else (), on_line)
