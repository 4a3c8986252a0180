"""The ledger (``ledger/``, this project's turn settlement and compaction over SQLite)
as a :class:`~ctxaudit.targets.base.Target`: S1-S9 and C1.

It is versioned with the project: ``ledger/__init__.__version__`` when it declares
one, else the project's version (pyproject.toml), so the audit's and the mutation
runner's reports land in the same ``reports/ledger-<version>/``.
"""

from __future__ import annotations

import importlib
import re
import sys
import tomllib
import types
from pathlib import Path

from ctxaudit.paths import REPO_ROOT
from ctxaudit.properties import applying
from ctxaudit.targets.base import BaseTarget, Described, MutationScope, Resolved, TargetError

NAME = "ledger"


class Ledger(BaseTarget):
    name = NAME
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
        notes={"S9": "blocking paths"},
    )
    suites = ("tests/settlement",)
    mutation = MutationScope(
        "ledger",
        "ledger",
        spec_option="--ledger",
        config=Path(__file__).with_name("mutation.toml"),
        spec_help="a folder that holds a copy of ledger/ (default: this repository's)",
    )
    spec_forms = "'ledger'"
    default_spec = NAME

    def expand(self, spec: str, repo: Path | None = None) -> list[Described]:
        return [Described(NAME, NAME, self.resolve().version)]

    def resolve(self, spec: str | None = None, repo: Path | None = None) -> Resolved:
        """``""``, ``None`` or ``"ledger"``: this repository's ``ledger/``; a path: a
        folder that holds a ``ledger/`` package (a copy of the repository)."""
        given = (spec or "").strip()
        root = REPO_ROOT if given in ("", NAME) else Path(given).expanduser().resolve()
        init = root / "ledger" / "__init__.py"
        if not init.is_file():
            raise TargetError(f"ledger: no ledger/ package under {root}")
        m = re.search(
            r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", init.read_text(encoding="utf-8"), re.M
        )
        version = m.group(1) if m else project_version()
        again = NAME if root == REPO_ROOT else str(root)
        return Resolved(NAME, version, root, again, copy_dir="ledger")

    def code_paths(self, resolved: Resolved) -> list[Path]:
        """The ``ledger/`` package only: its root is this repository, which holds the
        reports and caches the audit writes."""
        return [resolved.root / "ledger"]

    def load(self, resolved: Resolved) -> types.ModuleType:
        """Import the resolved ``ledger`` package in this process (one per process)."""
        already = sys.modules.get("ledger")
        if already is None and str(resolved.root) not in sys.path:
            sys.path.insert(0, str(resolved.root))
        module = importlib.import_module("ledger")
        got = Path(module.__file__ or "").resolve()
        if not got.is_relative_to(resolved.root):
            raise TargetError(f"ledger: imported {got}, expected the package under {resolved.root}")
        return module


def project_version() -> str:
    data = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return str(data["project"]["version"])


TARGET = Ledger()
