"""lightspeed-stack as a :class:`~ctxaudit.targets.base.Target`: turn settlement
(S1-S3, S6, S7, S9, C1) of the trees of its git repository.

The trees and their environments are :mod:`ctxaudit.targets.lightspeed` (``tree``,
``env``, ``runner``); this module only says what the target is to the audit. Its
suites run in the tree's own Python 3.12 environment (:meth:`suite_process`); its
known findings are checked by running each one's fixed program
(``tests/lightspeed/inenv/test_findings.py``). ``python -m mutation`` mutates it (its
``mutation.toml``), in the tree's environment too; its lockstep leaves
out the regions of the known findings that reproduce on the unmutated tree, as in the
properties phase (the worker sets up the session's fixtures without a mutant).

The fix audit (``ctxaudit/fixaudit/``, fixes in ``fixes/``) runs on it
too: a fix's forms name trees by tag or commit prefix (:meth:`fix_version`); a fixed
copy of a tree is run as that tree (its tag and commit, so the findings registered for
it are checked) with exactly the given findings' regions left out
(``CTXAUDIT_LIGHTSPEED_LEAVE_OUT``, :meth:`copy_env`); on the fully fixed tree only the
lockstep runs (:attr:`fixed_suites`: the findings' regression tests fail there by
design, each fixed finding no longer reproducing). Attribution by replay is the
generic one; ``bin/ctxaudit attribute`` names the tree as :meth:`attribute_args` says
(``tests/lightspeed/test_lightspeed_attribution.py`` attributes a real failure).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxaudit.properties import applying
from ctxaudit.targets.base import (
    BaseTarget,
    Described,
    FindingsCheck,
    KnownFinding,
    MutationScope,
    PytestOption,
    RepoOption,
    Resolved,
    TargetError,
    known_entry,
    release_order,
)
from ctxaudit.targets.lightspeed.runner import PRELOAD

if TYPE_CHECKING:
    from ctxaudit.targets.lightspeed.env import LightspeedEnv

NAME = "lightspeed-stack"
INENV = "tests/lightspeed/inenv"  # = ctxaudit.targets.lightspeed.runner.INENV
FINDINGS_TESTS = f"{INENV}/test_findings.py"
#: the reproduction file the in-environment findings test writes
REPRODUCTION_ENV = "CTXAUDIT_LIGHTSPEED_REPRODUCTION"
#: the findings whose regions the in-environment lockstep leaves out (``none``: none)
LEAVE_OUT_ENV = "CTXAUDIT_LIGHTSPEED_LEAVE_OUT"

#: why the owner properties do not apply to its trees
OWNER = "needs an owner: not in these trees"


class Lightspeed(BaseTarget):
    name = NAME
    preload = PRELOAD
    properties = applying(
        "S1",
        "S2",
        "S3",
        "S4",
        "S5",
        "S6",
        "S7",
        "S8",
        "S9",
        "C1",
        notes={
            "S4": OWNER,
            "S5": OWNER,
            "S7": "the tree's own writes, failed through the OGX client",
            "S8": OWNER,
        },
    )
    suites = (INENV,)
    suite_ignores = (f"{INENV}/test_history.py",)
    findings_registry = "ctxaudit/targets/lightspeed/findings.py"
    fixes_package = "ctxaudit.targets.lightspeed.fixes"
    #: its mutation.toml's paths are relative to the tree's src/
    mutation = MutationScope(
        "lightspeed-stack",
        ".",
        source_root="src",
        spec_option="--lightspeed",
        config=Path(__file__).with_name("mutation.toml"),
        # its own tests: the tree's tests/unit, in the tree's peer environment
        peer=True,
        spec_help="lightspeed-stack tree: lightspeed-stack==TAG, lightspeed-stack@REV or a "
        "path (default: main of the repository)",
    )
    repo = RepoOption(
        "--lightspeed-repo",
        "CTXAUDIT_LIGHTSPEED_REPO",
        "lightspeed-stack's git repository (a clone, a bundle or a working tree) that "
        "lightspeed-stack specs are resolved in (default: $CTXAUDIT_LIGHTSPEED_REPO)",
    )
    pytest_options = (
        PytestOption(
            "--lightspeed-repo",
            "lightspeed-stack's git repository (a clone, a bundle or a working tree); "
            "also CTXAUDIT_LIGHTSPEED_REPO. Without it the lightspeed-stack tests skip.",
            metavar="PATH",
        ),
        PytestOption(
            "--lightspeed",
            "the lightspeed-stack tree to test: lightspeed-stack==TAG, lightspeed-stack@REV "
            "or a path to a working tree. Default: the repository's main.",
        ),
    )
    spec_forms = "'lightspeed-stack==TAG', 'lightspeed-stack@REV', 'lightspeed-stack>=X'"
    fix_audit = True
    #: the fully fixed tree: the lockstep, not the findings' regression tests
    fixed_suites = (INENV, f"--ignore={FINDINGS_TESTS}")

    def history(self, version: str) -> tuple[str, tuple[Any, ...]]:
        """Its lines are the release branches (``0.6``: the 0.6 tags and release/0.6's
        head) and main (its head and the commits audited by hash); on a line, the tags in
        release order, then commits, then the branch's head. Reports carry no commit
        dates, so commits named by hash alone keep their text order before the head."""
        line = history_line(version)
        if version.startswith(("release-", "main-")):
            return line, (2, version)
        if re.fullmatch(r"g[0-9a-f]{7,40}", version):
            return line, (1, version)
        return line, (0, *release_order(version))

    def claims(self, spec: str) -> bool:
        from ctxaudit.targets.lightspeed.tree import QUERY

        return spec.startswith(NAME) or (Path(spec).expanduser() / QUERY).is_file()

    def expand(self, spec: str, repo: Path | None = None) -> list[Described]:
        """A tag, ``@REV``, a range of tags or a working tree, resolved in ``repo``."""
        from ctxaudit.targets.lightspeed import tree as lstree

        try:
            trees = lstree.resolve_many(spec, repo)
        except lstree.TargetError as exc:
            raise TargetError(str(exc)) from None
        return [Described(NAME, _again(t), _version(t, spec), repo) for t in trees]

    def resolve(self, spec: str | None = None, repo: Path | None = None) -> Resolved:
        """One tree (``""``: main), resolved in ``repo`` (default
        ``$CTXAUDIT_LIGHTSPEED_REPO``). Its ``mutation_root`` is the tree's ``src/``."""
        from ctxaudit.targets.lightspeed import tree as lstree

        try:
            tree = lstree.resolve(spec, repo or lstree.repo_from(None))
        except lstree.TargetError as exc:
            raise TargetError(str(exc)) from None
        version = _version(tree, spec or "")
        return Resolved(
            NAME, version, tree.root, _again(tree), copy_dir=".", source_root="src",
            commit=tree.commit, tree=tree,
        )  # fmt: skip

    def load(self, resolved: Resolved) -> LightspeedEnv:
        """Build (or reuse) the tree's Python 3.12 environment."""
        from ctxaudit.targets.lightspeed.env import ensure_env

        return ensure_env(resolved.tree)

    def suite_process(self, target: Described, tmp: Path) -> tuple[str, dict[str, str]]:
        """The tree's environment python and the child environment (builds it once)."""
        from ctxaudit.targets.lightspeed import runner
        from ctxaudit.targets.lightspeed import tree as lstree
        from ctxaudit.targets.lightspeed.env import ensure_env

        tree = lstree.resolve(target.spec, target.repo or lstree.repo_from(None))
        env = ensure_env(tree)
        return str(env.python), runner.child_env(env, tree, {"TMPDIR": str(tmp)})

    def peer_suite(self, resolved: Resolved) -> Path | None:
        """The tree itself: its own ``tests/unit`` (None when it has none)."""
        return resolved.root if (resolved.root / "tests" / "unit").is_dir() else None

    def peer_process(self, target: Described, tmp: Path) -> tuple[str, dict[str, str]]:
        """Like :meth:`suite_process`, in the tree's peer environment (its ``dev`` group
        too: the tools its own tests import), the tree's ``src/`` first on the path."""
        from ctxaudit.targets.lightspeed import runner
        from ctxaudit.targets.lightspeed import tree as lstree
        from ctxaudit.targets.lightspeed.env import ensure_env

        tree = lstree.resolve(target.spec, target.repo or lstree.repo_from(None))
        env = ensure_env(tree, peer=True)
        return str(env.python), runner.child_env(env, tree, {"TMPDIR": str(tmp)})

    def findings(self) -> list[KnownFinding]:
        from ctxaudit.targets.lightspeed import findings as lsfindings

        return [
            KnownFinding(
                f.id, f.props, f.summary, f.region, f"{FINDINGS_TESTS}::test_known_finding[{f.id}]"
            )
            for f in lsfindings.FINDINGS
        ]

    def findings_check(self, target: Described, tmp: Path) -> FindingsCheck:
        """Each known finding's fixed program on the tree: registered when its program
        ran, affecting when the tree reproduces it (the test writes which do). A program
        that ended in ctxaudit's own error (the record's ``could_not_check``: finding id
        -> why) is neither: its entry says why ctxaudit could not check it."""
        repro = tmp / "reproduction.json"

        def read(outcome: Mapping[str, str]) -> list[dict[str, Any]]:
            shown = json.loads(repro.read_text(encoding="utf-8")) if repro.exists() else {}
            unchecked: dict[str, str] = shown.get("could_not_check") or {}
            known = []
            for f in self.findings():
                why = unchecked.get(f.id)
                entry = known_entry(
                    f,
                    registered=why is None and outcome.get(f.repro) in ("passed", "failed"),
                    affects=why is None and f.id in shown.get("reproducing", []),
                )
                if why is not None:
                    entry["could_not_check"] = why
                known.append(entry)
            return known

        return FindingsCheck([FINDINGS_TESTS], {REPRODUCTION_ENV: str(repro)}, read)

    def fix_version(self, resolved: Resolved) -> str:
        """A tree's tag, else its commit (the fixes' forms name trees as the findings do)."""
        tree = resolved.tree
        return str((tree.tag if tree is not None else None) or resolved.commit or resolved.version)

    def copy_env(self, resolved: Resolved, leave_out: Sequence[str]) -> dict[str, str]:
        """Leave out exactly ``leave_out``'s regions; the copy reads as ``resolved``'s tree
        (its tag and commit: the findings registered for it are checked there)."""
        tree = resolved.tree
        return {
            LEAVE_OUT_ENV: ",".join(leave_out) or "none",
            "CTXAUDIT_LIGHTSPEED_TAG": (tree.tag if tree is not None else None) or "",
            "CTXAUDIT_LIGHTSPEED_COMMIT": resolved.commit or "",
            "CTXAUDIT_LIGHTSPEED_LABEL": f"{resolved.label} (a fixed copy)",
        }

    def attribute_args(self, spec: str, version: str) -> list[str]:
        """How ``bin/ctxaudit attribute`` names this tree: the spec that resolves to it
        again (``lightspeed-stack@<commit>``, a tag, or a working tree's path; not the
        report's version, ``main-gcd1a048``, which names no tree), and the repository."""
        return ["--target", shlex.quote(spec), "--lightspeed-repo=REPO"]

    def rerun_args(self, nodeid: str, spec: str) -> list[str]:
        """The in-environment suite reruns through its runner test."""
        return [
            "tests/lightspeed/test_lightspeed.py::test_lockstep_and_findings",
            "--lightspeed-repo=REPO",
            f"'--lightspeed={spec}'",
        ]


def _again(tree: Any) -> str:
    """The spec that names this tree again."""
    if tree.origin == "path":
        return str(tree.root)
    if tree.tag:
        return f"{NAME}=={tree.tag}"
    return f"{NAME}@{tree.commit}"


def _version(tree: Any, spec: str) -> str:
    """The version in reports: the tree's label, or for a branch named in the spec
    (``lightspeed-stack@main``) ``main-gcd1a048``."""
    version: str = tree.label.removeprefix(f"{NAME}-")
    rev = spec.partition("@")[2]
    if tree.origin == "rev" and rev and not re.fullmatch(r"[0-9a-f]{7,40}", rev):
        version = f"{rev.replace('/', '-')}-g{(tree.commit or '')[:7]}"
    return version


TARGET = Lightspeed()


def history_line(version: str) -> str:
    """The release line of a tree as reports name it: ``0.6.2`` and
    ``release-0.6-gb56fe5c`` are ``0.6``; ``main-gcd1a048`` and a commit named by its hash
    (``g41d55b987cf8``) are ``main``."""
    m = re.match(r"^(?:release-)?(\d+\.\d+)", version)
    return m.group(1) if m else "main"
