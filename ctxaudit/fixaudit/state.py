"""The fix audit's options and the state its steps share: what one fix audit runs
(:class:`FixAuditOptions`), the audit under way with its options resolved
(:class:`FixAudit`, made by :func:`start`), and what one step hands the next (the
control's replays, the fully fixed tree). Every other module of the package reads these;
this one imports none of them."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ctxaudit import fix_patches
from ctxaudit import fixes as fixlib
from ctxaudit.attribution import Runner
from ctxaudit.suite_run import OwnTestsRunner
from ctxaudit.target_report import TargetReport

Ticker = Callable[[str], None]
# runs pytest: (tree spec, paths, env, replays {nodeid: [version, blob]}) -> tests
# the environment of a run on a copy of the tree that leaves out these findings' regions
LeaveOut = Callable[[Sequence[str]], dict[str, str]]

VERIFIED = "fix verified"


@dataclasses.dataclass(frozen=True)
class FixAuditOptions:
    """What one fix audit runs and where it writes (:func:`fix_audit`).

    ``suites``: what runs on the fully fixed tree (unless ``fixed_suites``); ``props``
    the target's properties (id -> name); ``out_dir`` the version's report folder (the
    patches go beside it, once per target: ``ctxaudit.fix_patches``);
    ``ticker`` gets a status line as each step starts; ``fixes`` the fixes by finding
    id (default: the registry's, ``ctxaudit.targets.fixes()``).

    ``seeds``: more Hypothesis seeds for the fully fixed tree; its suites run once under
    the report's seed and once under each of these (``CTXAUDIT_SEED`` in the runner's
    environment), and a property holds there only when it holds under every one.

    What differs between targets comes from the target (``ctxaudit.targets``), never
    from its name: ``version_name`` is the name that orders the forms a fix tries (the
    forms that name it first; each fix takes the first form whose edits apply to the
    tree: ``ctxaudit.fixes.choose``) and chooses a form with a ``reason``
    (``Target.fix_version``; default the report's version), ``leave_out`` the
    environment of a run on a copy of the tree that leaves out the given findings'
    regions (``Target.copy_env``; default ``CTXAUDIT_FINDINGS``), ``fixed_suites`` what
    runs on the fully fixed tree (``Target.fixed_suites``; default ``suites``).

    ``left_out``: the findings whose regions the run of the unfixed tree left out
    (default: every known finding that affects the version, as the audit's properties
    phase does); the replays of its failures leave out the same, and so does the
    command that reruns an attribution.

    ``own_tests``: runs the target's own tests on a tree (``ctxaudit.suite_run``); with
    it, they run on the unfixed and the fully fixed trees, and a fix must pass them
    except those its form names as pinning the bug (:mod:`ctxaudit.fixaudit.own_tests`).

    ``attribution_only``: only tell the unfixed tree's failures known from new
    (``--no-fixes``: :func:`attribute_failures`), so that the known/new split does not
    depend on whether the fixes are verified; no fix is verified, no fully fixed tree."""

    suites: Sequence[str]
    props: Mapping[str, str]
    out_dir: Path
    ticker: Ticker | None = None
    fixes: Mapping[str, fixlib.Fix] | None = None
    seeds: Sequence[int] = ()
    version_name: str | None = None
    leave_out: LeaveOut | None = None
    fixed_suites: Sequence[str] | None = None
    left_out: Sequence[str] | None = None
    attribution_only: bool = False
    own_tests: OwnTestsRunner | None = None


@dataclasses.dataclass
class FixAudit:
    """One fix audit under way: its inputs, its resolved options, and what its steps
    found so far."""

    report: TargetReport
    root: Path
    run: Runner
    options: FixAuditOptions
    tmp: Path  # the copies of the tree are made here
    fixes: Mapping[str, fixlib.Fix]
    version: str  # the name that orders the forms a fix tries
    leave_out: LeaveOut
    unfixed_left_out: list[str]  # the regions the unfixed tree's run left out
    env: dict[str, str]  # the environment of its failures' replays
    affecting: list[dict[str, Any]]  # the known findings that reproduce on the version
    rows: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    singles: dict[str, Path] = dataclasses.field(default_factory=dict)  # id -> its fix alone
    unfixable: list[str] = dataclasses.field(default_factory=list)  # a form with a reason
    patches: dict[str, str] = dataclasses.field(default_factory=dict)  # text -> its link
    write_patches: bool = True  # False: attribution only, which links no patch

    def tick(self, text: str) -> None:
        if self.options.ticker:
            self.options.ticker(text)

    def write_patch(self, name: str, diff: str) -> str:
        """Write a patch of the version's (a fix's, or ``combined``) once for the target
        (``ctxaudit.fix_patches``); its link, relative to the version's report folder.
        A combined patch that is one fix's patch (one fix applied) is that fix's file."""
        if not self.write_patches:
            return ""
        if diff not in self.patches:
            out_root = self.options.out_dir.parent
            self.patches[diff] = fix_patches.write(out_root, self.report.target, name, diff)
        return self.patches[diff]


@dataclasses.dataclass
class Control:
    """The unfixed tree's failures replayed on an unfixed copy (the control): each
    replay's outcome, and whether it failed as reported."""

    replayed: list[dict[str, Any] | None]
    reproduces: list[bool]


@dataclasses.dataclass
class FixedTree:
    """The fully fixed tree: the fixes it applies, its patch and its properties."""

    applied: list[str]
    combined_patch: str  # its link, "" when no fix applied
    none_applied: str  # why no fix applied, in words ("" when one did)
    report: TargetReport  # its suites' run, judged
    seeds: list[int | None]
    root: Path | None = None  # the tree (under the audit's temporary folder)
    #: the target's own tests on it (:mod:`ctxaudit.fixaudit.own_tests`); empty: not run
    own_tests: dict[str, Any] = dataclasses.field(default_factory=dict)


def start(
    report: TargetReport,
    root: Path,
    run: Runner,
    options: FixAuditOptions,
    tmp: Path,
    write_patches: bool = True,
) -> FixAudit:
    """The fix audit's options resolved (the registry's fixes, the version's name, the
    environment of the replays), and the patches an earlier run left in the version's
    own folder removed."""
    from ctxaudit import targets

    fixes = targets.fixes() if options.fixes is None else options.fixes
    leave_out = options.leave_out or _leave_out_findings
    affecting = [k for k in report.known if k["affects"]]
    left_out = options.left_out
    unfixed_left_out = [k["id"] for k in affecting] if left_out is None else list(left_out)
    fix_patches.clear_own(options.out_dir)
    return FixAudit(
        report, root, run, options, tmp, fixes, options.version_name or report.version,
        leave_out, unfixed_left_out, leave_out(unfixed_left_out), affecting,
        write_patches=write_patches,
    )  # fmt: skip


def _leave_out_findings(ids: Sequence[str]) -> dict[str, str]:
    """The default ``leave_out``: ``CTXAUDIT_FINDINGS`` (``Target.copy_env``'s default)."""
    return {"CTXAUDIT_FINDINGS": ",".join(ids) or "none"}
