"""A target that is a library released on PyPI (:mod:`ctxaudit.targets.pypi`), whose
suites run in each release's own environment with the tree first on the path.

A subclass names its :class:`~ctxaudit.targets.pypi.Library`, its properties, its
in-environment suite and its findings module (``FINDINGS``, ``FINDINGS_TESTS``,
``registered(version)``; each finding has ``id``, ``prop``, ``summary``, ``region``,
``repro`` and ``versions``). The findings check runs every finding's regression test
with every finding assumed: the ones that pass reproduce on the release.

A library whose sdist ships its tests declares ``peer=True`` in its
:class:`~ctxaudit.targets.base.MutationScope`: :meth:`LibraryTarget.peer_suite` is then
the folder with them, and :meth:`LibraryTarget.peer_process` the interpreter and
environment they run in (the release's peer environment, :mod:`ctxaudit.targets.pypi`),
with the tree first on the path as for the suites.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from ctxaudit.targets.base import (
    BaseTarget,
    Described,
    FindingsCheck,
    KnownFinding,
    Resolved,
    TargetError,
    known_entry,
)
from ctxaudit.targets.pypi import Env, Library


class LibraryTarget(BaseTarget):
    library: Library
    findings_module = ""  # "ctxaudit.targets.<name>.findings"
    #: the environment variable that names the version a copy of a tree reads as
    version_env = ""
    excludes_known = True
    fix_audit = True

    def _findings(self) -> ModuleType:
        return importlib.import_module(self.findings_module)

    def claims(self, spec: str) -> bool:
        name = self.library.name
        return (
            spec == name
            or spec.startswith(f"{name}==")
            or self.library.is_tree(Path(spec).expanduser())
        )

    def expand(self, spec: str, repo: Path | None = None) -> list[Described]:
        name = self.library.name
        if spec.startswith(name) and not re.fullmatch(rf"{re.escape(name)}(==\S+)?", spec):
            raise TargetError(f"target {spec!r}: expected {name}, {name}==X or a path")
        r = self.resolve(spec)
        return [Described(self.name, r.spec, r.version)]

    def resolve(self, spec: str | None = None, repo: Path | None = None) -> Resolved:
        tree = self.library.resolve(spec)
        again = str(tree.root) if tree.origin == "path" else f"{self.library.name}=={tree.version}"
        copy_dir = self.mutation.copy_dir if self.mutation else None
        return Resolved(self.name, tree.version, tree.root, again, copy_dir=copy_dir, tree=tree)

    def load(self, resolved: Resolved) -> Env:
        """Build (or reuse) the release's environment."""
        return self.library.ensure_env(resolved.tree or self.library.resolve(resolved.spec))

    def suite_process(self, target: Described, tmp: Path) -> tuple[str, dict[str, str]]:
        tree = self.library.resolve(target.spec)
        env = self.library.ensure_env(tree)
        environ = self.library.child_environ(env, tree)
        environ["TMPDIR"] = str(tmp)
        return str(env.python), environ

    def findings(self) -> list[KnownFinding]:
        return [
            KnownFinding(f.id, f.prop, f.summary, f.region, f.repro)
            for f in self._findings().FINDINGS
        ]

    def findings_check(self, target: Described, tmp: Path) -> FindingsCheck:
        registry = self._findings()

        def read(outcome: Mapping[str, str]) -> list[dict[str, Any]]:
            return [
                known_entry(
                    KnownFinding(f.id, f.prop, f.summary, f.region, f.repro),
                    registered=target.version in f.versions,
                    affects=outcome.get(f.repro) == "passed",
                )
                for f in registry.FINDINGS
            ]

        return FindingsCheck([registry.FINDINGS_TESTS], {"CTXAUDIT_FINDINGS": "all"}, read)

    def left_out(self, version: str) -> list[str]:
        return [f.id for f in self._findings().registered(version)]

    def suite_args(self, spec: str) -> list[str]:
        return [f"--{self.library.name}={spec}"]

    def peer_suite(self, resolved: Resolved) -> Path | None:
        """The library's own ``tests/`` for this version (its sdist's), where the target
        declares a peer suite; else None."""
        if self.mutation is None or not self.mutation.peer:
            return None
        return self.library.peer_tests(resolved.tree or self.library.resolve(resolved.spec))

    def peer_process(self, target: Described, tmp: Path) -> tuple[str, dict[str, str]]:
        """Like :meth:`suite_process`, in the release's peer environment (its tests'
        dependencies as well): the interpreter and the child's environment."""
        tree = self.library.resolve(target.spec)
        env = self.library.ensure_peer_env(tree)
        environ = self.library.child_environ(env, tree, peer=True)
        environ["TMPDIR"] = str(tmp)
        return str(env.python), environ

    def copy_env(self, resolved: Resolved, leave_out: Sequence[str]) -> dict[str, str]:
        """Leave out exactly ``leave_out``'s regions; the copy reads as ``resolved``."""
        return {
            "CTXAUDIT_FINDINGS": ",".join(leave_out) or "none",
            f"{self.library.env_prefix}_VERSION": resolved.version,
        }
