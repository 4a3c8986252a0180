"""langchain (v1) as a :class:`~ctxaudit.targets.base.Target`: ``SummarizationMiddleware``
(C1, S6, S7) and the tool-call limit's end (B3). Trees and environments are
:mod:`ctxaudit.targets.langchain.tree`; its suites (``tests/langchain/inenv``) run in
the release's own environment (:meth:`suite_process`), with the tree first on the path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
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
from ctxaudit.targets.langchain import tree as lc
from ctxaudit.targets.langchain.findings import FINDINGS_TESTS, NAME

INENV = "tests/langchain/inenv"


class Langchain(BaseTarget):
    name = NAME
    properties = applying(
        "B3",
        "S6",
        "S7",
        "C1",
        notes={
            "B3": "ToolCallLimitMiddleware's end: its findings program",
            "S7": "the summarizer's failure is the failed write",
        },
    )
    suites = (INENV,)
    findings_registry = "ctxaudit/targets/langchain/findings.py"
    fixes_package = "ctxaudit.targets.langchain.fixes"
    mutation = MutationScope(
        NAME,
        "langchain",
        spec_option="--langchain",
        config=Path(__file__).with_name("mutation.toml"),
        spec_help="langchain release (langchain==1.5.2) or a tree that holds langchain/",
    )
    pytest_options = (
        PytestOption(
            "--langchain",
            "langchain target: a release (1.5.2, langchain==1.5.2) fetched into .cache/, or "
            "a folder that holds langchain/agents/middleware. Default: the current release.",
        ),
    )
    excludes_known = True
    fix_audit = True
    fixed_suites = (INENV, f"--ignore={FINDINGS_TESTS}")
    spec_forms = "'langchain==X', a folder that holds langchain/"
    default_spec = NAME

    def claims(self, spec: str) -> bool:
        return spec == NAME or spec.startswith(f"{NAME}==") or lc.is_tree(Path(spec).expanduser())

    def expand(self, spec: str, repo: Path | None = None) -> list[Described]:
        if spec.startswith(NAME) and not re.fullmatch(rf"{NAME}(==\S+)?", spec):
            raise TargetError(f"target {spec!r}: expected {NAME}, {NAME}==X or a path")
        r = self.resolve(spec)
        return [Described(NAME, r.spec, r.version)]

    def resolve(self, spec: str | None = None, repo: Path | None = None) -> Resolved:
        tree = lc.resolve(spec)
        again = str(tree.root) if tree.origin == "path" else f"{NAME}=={tree.version}"
        return Resolved(NAME, tree.version, tree.root, again, copy_dir="langchain", tree=tree)

    def load(self, resolved: Resolved) -> lc.LangchainEnv:
        """Build (or reuse) the release's environment."""
        return lc.ensure_env(resolved.tree or lc.resolve(resolved.spec))

    def suite_process(self, target: Described, tmp: Path) -> tuple[str, dict[str, str]]:
        tree = lc.resolve(target.spec)
        env = lc.ensure_env(tree)
        environ = lc.child_environ(env, tree)
        environ["TMPDIR"] = str(tmp)
        return str(env.python), environ

    def findings(self) -> list[KnownFinding]:
        from ctxaudit.targets.langchain import findings as registry

        return [KnownFinding(f.id, f.prop, f.summary, f.region, f.repro) for f in registry.FINDINGS]

    def findings_check(self, target: Described, tmp: Path) -> FindingsCheck:
        """Every finding's regression test, every finding assumed: the ones that pass
        reproduce on this release."""
        from ctxaudit.targets.langchain import findings as registry

        def read(outcome: Mapping[str, str]) -> list[dict[str, Any]]:
            return [
                known_entry(
                    KnownFinding(f.id, f.prop, f.summary, f.region, f.repro),
                    registered=target.version in f.versions,
                    affects=outcome.get(f.repro) == "passed",
                )
                for f in registry.FINDINGS
            ]

        return FindingsCheck([FINDINGS_TESTS], {"CTXAUDIT_FINDINGS": "all"}, read)

    def left_out(self, version: str) -> list[str]:
        from ctxaudit.targets.langchain import findings as registry

        return [f.id for f in registry.registered(version)]

    def suite_args(self, spec: str) -> list[str]:
        return [f"--langchain={spec}"]

    def copy_env(self, resolved: Resolved, leave_out: Sequence[str]) -> dict[str, str]:
        """Leave out exactly ``leave_out``'s regions; the copy reads as ``resolved``."""
        return {
            "CTXAUDIT_FINDINGS": ",".join(leave_out) or "none",
            "CTXAUDIT_LANGCHAIN_VERSION": resolved.version,
        }


TARGET = Langchain()
