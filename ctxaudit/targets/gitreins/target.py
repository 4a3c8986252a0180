"""gitreins as a :class:`~ctxaudit.targets.base.Target`: the budget meter and the
compaction valve (B1-B6, V1-V8). Finding and importing a tree is
:mod:`ctxaudit.targets.gitreins`; its own tests are :mod:`ctxaudit.targets.gitreins.sdist`.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ctxaudit.properties import applying
from ctxaudit.targets.base import (
    BaseTarget,
    Described,
    FindingsCheck,
    KnownFinding,
    MutationScope,
    PytestOption,
    Resolved,
    TargetError,
    known_entry,
)
from ctxaudit.targets.gitreins import tree as gitreins

NAME = "gitreins"
FINDINGS_TESTS = "tests/gitreins/test_findings.py"


class Gitreins(BaseTarget):
    name = NAME
    properties = applying("B1", "B2", "B3", "B4", "B5", "B6", *(f"V{n}" for n in range(1, 9)))
    suites = ("tests/gitreins",)
    suite_ignores = ("tests/gitreins/test_history.py",)
    findings_registry = "ctxaudit/targets/gitreins/findings.py"
    fixes_package = "ctxaudit.targets.gitreins.fixes"
    mutation = MutationScope(
        "gitreins",
        "engine",
        spec_option="--gitreins",
        peer=True,
        config=Path(__file__).with_name("mutation.toml"),
        spec_help="gitreins version or source tree",
    )
    pytest_options = (
        PytestOption(
            "--gitreins",
            "gitreins target: a published version (0.14.0, gitreins==0.14.0) fetched into "
            ".cache/, or a path to a source tree that has engine/. Default: the pinned version.",
            resolves=True,
        ),
    )
    excludes_known = True
    fix_audit = True
    spec_forms = "'gitreins==X', 'gitreins>=X', a gitreins source tree"
    default_spec = NAME  # the pinned release
    takes_paths = True  # a path that is no target's tree gets gitreins' explanation

    def claims(self, spec: str) -> bool:
        if spec.startswith(NAME):
            return True
        path = Path(spec).expanduser()
        return (path / "engine/eval_cap.py").is_file() or (
            path.name == "engine" and (path / "eval_cap.py").is_file()
        )

    def expand(self, spec: str, repo: Path | None = None) -> list[Described]:
        """``gitreins`` (pinned), ``gitreins==X``, ``gitreins>=X`` (a range of published
        releases) or a path to a source tree."""
        if spec in (NAME, "gitreins==pinned"):
            tree = gitreins.resolve("")
            return [Described(NAME, tree.version, tree.version)]
        m = re.match(r"^gitreins\s*(==|>=|<=|>|<|~=|!=)\s*(\S+)$", spec)
        if m and m.group(1) == "==":
            tree = gitreins.resolve(f"gitreins=={m.group(2)}")
            return [Described(NAME, tree.version, tree.version)]
        if m or (spec.startswith(NAME) and "," in spec):
            return [Described(NAME, v, v) for v in published_versions(spec)]
        if spec.startswith(NAME):
            raise TargetError(
                f"target {spec!r}: expected gitreins==X, a range like gitreins>=0.13.0, or a path"
            )
        tree = gitreins.resolve(spec)
        return [Described(NAME, str(tree.root), tree.version)]

    def resolve(self, spec: str | None = None, repo: Path | None = None) -> Resolved:
        tree = gitreins.resolve(spec or "")
        again = str(tree.root) if tree.origin == "path" else tree.version
        return Resolved(NAME, tree.version, tree.root, again, copy_dir="engine", tree=tree)

    def load(self, resolved: Resolved) -> gitreins.GitreinsModules:
        return gitreins.load(resolved.tree or gitreins.resolve(resolved.spec))

    def findings(self) -> list[KnownFinding]:
        from ctxaudit.targets.gitreins import findings as registry

        return [
            KnownFinding(f.id, f.prop, f.summary, f.region, f.repro)
            for f in registry.FINDINGS
            if f.target == NAME
        ]

    def findings_check(self, target: Described, tmp: Path) -> FindingsCheck:
        """Every finding's regression test, with every known finding assumed: the ones
        that pass reproduce on this version."""
        from ctxaudit.targets.gitreins import findings as registry

        versions = {f.id: f.versions for f in registry.FINDINGS}

        def read(outcome: Mapping[str, str]) -> list[dict[str, Any]]:
            return [
                known_entry(
                    f,
                    registered=target.version in versions[f.id],
                    affects=outcome.get(f.repro) == "passed",
                )
                for f in self.findings()
            ]

        return FindingsCheck([FINDINGS_TESTS], {"CTXAUDIT_FINDINGS": "all"}, read)

    def left_out(self, version: str) -> list[str]:
        from ctxaudit.targets.gitreins import findings as registry

        return [f.id for f in registry.registered(NAME, version)]

    def peer_suite(self, resolved: Resolved) -> Path:
        """gitreins' own tests: the tree's, or its version's sdist (fetched, cached)."""
        from ctxaudit.targets.gitreins.sdist import tests_root

        return tests_root(resolved.tree or gitreins.resolve(resolved.spec))

    def suite_args(self, spec: str) -> list[str]:
        return [f"--gitreins={spec}"]


def published_versions(spec: str) -> list[str]:
    """The published gitreins releases a range (``gitreins>=0.13.0``) names, oldest first."""
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


TARGET = Gitreins()
