"""Imports run one way: each module of model/, ledger/, ctxaudit/ and mutation/ imports
only modules of its own layer or of the layers below it (read from the source with ast,
imports inside functions and under TYPE_CHECKING included), and no package code imports
tests/.

Between packages, lowest first: ``model`` (the oracle, pure Python), ``ledger`` (this
project's implementation: it may use the model, nothing else), ``ctxaudit`` (the
targets and the audit), ``mutation`` (the mutation runner: it asks ctxaudit's targets
and foundations, never the audit; the audit runs it as a process). Inside ctxaudit, the
layers are its folders and modules, lowest first:

2. foundations: data and helpers every layer above shares (report data, profiles,
   templating, pytest plugins, the fix format, the property catalogue, digests);
3. ``ctxaudit/targets/``: the target registry, and one folder per target;
4. what runs suites for the audit: the pytest process a suite runs in, the fix audit,
   benchmarks;
5. ``ctxaudit.audit``: the audit of one target version (its mutation audit, its step
   cache);
6. ``ctxaudit/matrix/``: the reports over every version;
7. ``ctxaudit/pipeline/``: the audit run (its options, phases, baseline judgement, the
   files CI systems read), which the command line calls;
8. the command line: it parses, and calls the pipeline (or the audit) once a command.

A module no layer names fails the test: give it one here.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("model", "ledger", "ctxaudit", "mutation")

#: module prefix -> layer; the longest prefix that matches a module wins
LAYERS: dict[str, int] = {
    "model": 0,
    "ledger": 1,
    "ctxaudit": 2,  # foundations: every module of ctxaudit/ not named below
    "ctxaudit.targets": 3,
    "ctxaudit.pytest_plugin": 3,  # the suites' pytest setup: the registry's options
    "ctxaudit.pytest_ctxaudit": 3,  # the maintainers' pytest plugin: asks the registry
    "ctxaudit.suite_run": 4,  # the pytest process a suite runs in (and each audit process)
    "ctxaudit.fixaudit": 4,  # a package: its modules share its layer
    "ctxaudit.attribution": 4,  # rerunning one attribution alone; the fix audit's records
    "ctxaudit.audit": 5,
    "ctxaudit.mutation_audit": 5,  # the mutation run of one target version
    "ctxaudit.result_cache": 5,  # the audit's step cache
    "ctxaudit.result_keys": 5,  # its keys
    "ctxaudit.result_json": 5,  # its values read back
    "ctxaudit.matrix": 6,
    "ctxaudit.pipeline": 7,
    "ctxaudit.cli": 8,
    "ctxaudit.launch": 8,  # the command's entry: the command line under the console rules
    "ctxaudit.__main__": 8,
    "mutation": 9,
}
NAMES = {
    0: "model",
    1: "ledger",
    2: "ctxaudit foundations",
    3: "ctxaudit.targets",
    4: "fix audit / benchmarks",
    5: "ctxaudit.audit",
    6: "ctxaudit.matrix",
    7: "ctxaudit.pipeline",
    8: "command line",
    9: "mutation",
}
#: package -> the highest layer of the packages below it that its modules may import
CEILING = {"mutation": 3}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def sources() -> dict[str, Path]:
    """Every module of the four packages (mutation/work holds mutated copies: not ours)."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        # never entered, not only skipped: a mutation run beside this test creates and
        # removes its folders under mutation/work while the walk goes on
        for folder, dirs, files in os.walk(ROOT / package):
            here = Path(folder)
            dirs[:] = sorted(
                d for d in dirs if d != "__pycache__" and here / d != ROOT / "mutation" / "work"
            )
            for name in sorted(files):
                if name.endswith(".py"):
                    found[module_name(here / name)] = here / name
    return found


def layer(module: str) -> int | None:
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        prefix = ".".join(parts[:n])
        if prefix in LAYERS:
            return LAYERS[prefix]
    return None


def imports(module: str, source: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, module) of each import of the four packages in ``source``."""
    package = module if is_package else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against the importing module's package
                up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*up, base] if base else up)
            found.append((node.lineno, base))
            # `from pkg import sub` imports the submodule pkg.sub where there is one
            found += [(node.lineno, f"{base}.{a.name}") for a in node.names]
    return [(line, m) for line, m in found if m.split(".")[0] in (*PACKAGES, "tests")]


def violations(module: str, source: str, known: set[str], is_package: bool) -> list[str]:
    """What ``module`` imports from a layer above its own."""
    mine = layer(module)
    assert mine is not None, f"{module}: no layer in tests/test_layering.py LAYERS; give it one"
    out = []
    ceiling = CEILING.get(module.split(".")[0], mine)
    for line, imported in imports(module, source, is_package):
        if imported.split(".")[0] == "tests":
            out.append(f"{module}:{line} imports {imported} (package code never imports tests/)")
            continue
        if imported not in known:  # an attribute (`from x import name`), not a module
            continue
        theirs = layer(imported)
        assert theirs is not None, f"{imported}: no layer in LAYERS"
        if theirs > mine:
            out.append(
                f"{module}:{line} imports {imported} "
                f"({NAMES[mine]} may not import {NAMES[theirs]}, a layer above it)"
            )
        elif ceiling < theirs < mine:
            out.append(
                f"{module}:{line} imports {imported} "
                f"({NAMES[mine]} may import ctxaudit's layers up to {NAMES[ceiling]} only)"
            )
    return out


def test_every_module_has_a_layer() -> None:
    assert [m for m in sources() if layer(m) is None] == []


def test_imports_run_one_way() -> None:
    mods = sources()
    known = set(mods)
    found = [
        v
        for module, path in mods.items()
        for v in violations(module, path.read_text(), known, path.name == "__init__.py")
    ]
    assert found == [], "\n".join(found)


@pytest.mark.parametrize(
    ("module", "source", "breaks"),
    [
        ("model.budget", "from ctxaudit.targets import gitreins", True),
        ("ledger.store", "import mutation.engine", True),
        ("ledger.store", "from model import config", False),
        ("ctxaudit.targets.gitreins.target", "def f():\n    from ctxaudit import audit", True),
        ("ctxaudit.targets.gitreins.target", "from mutation import engine", True),
        ("ctxaudit.targets.gitreins.target", "from .findings import FINDINGS", False),
        ("ctxaudit.atomic", "from ctxaudit.targets import get", True),
        ("ctxaudit.cli", "from mutation.since import changed_for", True),
        ("ctxaudit.audit", "import mutation", True),
        ("mutation.engine", "from ctxaudit.fixaudit import fix_audit", True),
        ("mutation.engine", "from ctxaudit.matrix import model", True),
        ("mutation.engine", "from ctxaudit import cli", True),
        ("mutation.engine", "from ctxaudit.targets import get", False),
        ("mutation.since", "from ctxaudit.since import Changed", False),
        ("ctxaudit.audit", "from tests.gitreins import broken_copies", True),
        ("ctxaudit.audit", "from ctxaudit.matrix import model", True),
        ("ctxaudit.matrix.model", "from ctxaudit.audit import PROPERTIES", False),
        ("ctxaudit.pipeline.run", "from ctxaudit.matrix import model", False),
        ("ctxaudit.pipeline.finish", "from ctxaudit import cli", True),
        ("ctxaudit.matrix.model", "from ctxaudit.pipeline import run", True),
        ("mutation.engine", "from ctxaudit.pipeline import run", True),
        ("ctxaudit.targets.lightspeed.env", "from . import tree", False),
        ("ctxaudit.targets.lightspeed.env", "from ...audit import run_target", True),
    ],
)
def test_the_check_sees_a_forbidden_import(module: str, source: str, breaks: bool) -> None:
    """The check itself, on one-line modules: it flags exactly the imports that go up."""
    assert bool(violations(module, source, set(sources()), False)) is breaks
