"""openai-agents as a :class:`~ctxaudit.targets.base.Target`: its sessions
(``agents.memory``), the runner's writes to them and ``OpenAIResponsesCompactionSession``
(S1-S3, S6, S7, S9, C1). Trees and environments are
:mod:`ctxaudit.targets.openai_agents.tree`; its suites (``tests/openai_agents/inenv``) run
in the release's own environment (:meth:`suite_process`), with the tree first on the
path.
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
from ctxaudit.targets.openai_agents import tree as oa
from ctxaudit.targets.openai_agents.findings import FINDINGS_TESTS, NAME

INENV = "tests/openai_agents/inenv"
OPTION = "--openai-agents"


class OpenAIAgents(BaseTarget):
    name = NAME
    properties = applying(
        "S1",
        "S2",
        "S3",
        "S6",
        "S7",
        "S9",
        "C1",
        notes={
            "S1": "the runner writes every turn; the compaction session only replaces",
            "S7": "a failed compact call or replacement write",
            "S9": "a run whose automatic compaction fails",
        },
    )
    suites = (INENV,)
    findings_registry = "ctxaudit/targets/openai_agents/findings.py"
    fixes_package = "ctxaudit.targets.openai_agents.fixes"
    mutation = MutationScope(
        NAME,
        oa.PACKAGE,
        spec_option=OPTION,
        config=Path(__file__).with_name("mutation.toml"),
        spec_help="openai-agents release (openai-agents==0.24.0) or a tree that holds agents/",
    )
    pytest_options = (
        PytestOption(
            OPTION,
            "openai-agents target: a release (0.24.0, openai-agents==0.24.0) fetched into "
            ".cache/, or a folder that holds agents/memory. Default: the current release.",
        ),
    )
    excludes_known = True
    fix_audit = True
    fixed_suites = (INENV, f"--ignore={FINDINGS_TESTS}")
    spec_forms = "'openai-agents==X', a folder that holds agents/"
    default_spec = NAME

    def claims(self, spec: str) -> bool:
        return spec == NAME or spec.startswith(f"{NAME}==") or oa.is_tree(Path(spec).expanduser())

    def expand(self, spec: str, repo: Path | None = None) -> list[Described]:
        if spec.startswith(NAME) and not re.fullmatch(rf"{NAME}(==\S+)?", spec):
            raise TargetError(f"target {spec!r}: expected {NAME}, {NAME}==X or a path")
        r = self.resolve(spec)
        return [Described(NAME, r.spec, r.version)]

    def resolve(self, spec: str | None = None, repo: Path | None = None) -> Resolved:
        tree = oa.resolve(spec)
        again = str(tree.root) if tree.origin == "path" else f"{NAME}=={tree.version}"
        return Resolved(NAME, tree.version, tree.root, again, copy_dir=oa.PACKAGE, tree=tree)

    def load(self, resolved: Resolved) -> oa.AgentsEnv:
        """Build (or reuse) the release's environment."""
        return oa.ensure_env(resolved.tree or oa.resolve(resolved.spec))

    def suite_process(self, target: Described, tmp: Path) -> tuple[str, dict[str, str]]:
        tree = oa.resolve(target.spec)
        env = oa.ensure_env(tree)
        environ = oa.child_environ(env, tree)
        environ["TMPDIR"] = str(tmp)
        return str(env.python), environ

    def findings(self) -> list[KnownFinding]:
        from ctxaudit.targets.openai_agents import findings as registry

        return [KnownFinding(f.id, f.prop, f.summary, f.region, f.repro) for f in registry.FINDINGS]

    def findings_check(self, target: Described, tmp: Path) -> FindingsCheck:
        """Every finding's regression test, every finding assumed: the ones that pass
        reproduce on this release."""
        from ctxaudit.targets.openai_agents import findings as registry

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
        from ctxaudit.targets.openai_agents import findings as registry

        return [f.id for f in registry.registered(version)]

    def suite_args(self, spec: str) -> list[str]:
        return [f"{OPTION}={spec}"]

    def copy_env(self, resolved: Resolved, leave_out: Sequence[str]) -> dict[str, str]:
        """Leave out exactly ``leave_out``'s regions; the copy reads as ``resolved``."""
        return {
            "CTXAUDIT_FINDINGS": ",".join(leave_out) or "none",
            "CTXAUDIT_OPENAI_AGENTS_VERSION": resolved.version,
        }


TARGET = OpenAIAgents()
