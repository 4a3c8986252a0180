"""Named mutants: ``mutation/catalogue.toml``, applied textually and checked to apply.

Each entry names one change to one function of a target file::

    [[mutant]]
    id = "GR-GAP-062"
    target = "gitreins"
    file = "engine/evaluator.py"
    function = "AgenticEvaluator._evaluate_loop"
    kind = "wrong-comparison"
    property = "V7"
    versions = ">=0.15.0"            # optional: target versions the entry is for
    before = "if budget_used > threshold:"
    after = "if cumulative_prompt_tok > threshold:"
    occurrence = 1                   # optional: which match, when `before` matches twice
    description = "..."

``before`` is one or more whole source lines, compared with surrounding whitespace
stripped; ``after`` replaces them at the indentation of the first matched line (its own
relative indentation kept). The entry applies when ``before`` occurs inside the named
function exactly once (or ``occurrence`` picks one), the result parses, and only that
function changed. An entry that does not apply raises :class:`CatalogueError`: nothing
is skipped silently. An entry whose ``versions`` excludes the target's version is
reported as not applicable to that version.

An entry whose code is not in the tree (its file or function is gone, or ``before`` is
not found in the function) raises :class:`NoLongerApplies`, a :class:`CatalogueError`.
What that means depends on the tree (``mutation/engine.py:build_plan``, told by
``mutation/orchestrate.py:resolve``):

- a **registered version** (a gitreins release from the pin or the index, a
  lightspeed-stack tag or commit of its repository): the catalogue is written for these,
  so an entry that should apply and does not is an error of the catalogue (the run exits
  2; fix the entry or its ``versions``);
- a **developer's tree** (a gitreins or lightspeed-stack source tree given as a path,
  which is also what ``--since`` needs, and the ledger, this repository's own code under
  development, whose agreement with the catalogue ``tests/mutation/test_catalogue.py``
  checks): the change may have removed the very write or comparison the entry stands
  for. That is information, not a crash: the entry is reported as no longer applying
  (:func:`no_longer_applies_line`) and the run goes on; it fails neither the run nor the
  gate by itself (if the write was removed, the properties say so).

Any other way an entry fails (``before`` matching twice, a change that does not parse or
touches more than its function, a file outside the scope) is an error on every tree.
"""

from __future__ import annotations

import ast
import re
import textwrap
import tomllib
from dataclasses import dataclass
from pathlib import Path

import libcst as cst
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from mutation.operators import KINDS, function_index, is_trampolinable

HERE = Path(__file__).resolve().parent
CATALOGUE_FILE = HERE / "catalogue.toml"
_PROPERTY = re.compile(r"^(B[1-6]|V[1-8]|S[1-8]|C1)$")
_REQUIRED = ("id", "target", "file", "function", "kind", "property", "before", "after")


class CatalogueError(Exception):
    """A catalogue entry is malformed or does not apply. The message names the entry."""


class NoLongerApplies(CatalogueError):
    """The code an entry mutates is not in the tree: its function is gone or ``before``
    is not found in it. ``what`` says which, in words (the report's line)."""

    def __init__(self, message: str, what: str) -> None:
        super().__init__(message)
        self.what = what


@dataclass(frozen=True)
class Entry:
    id: str
    target: str
    file: str
    function: str
    kind: str
    property: str
    before: str
    after: str
    description: str = ""
    versions: str = ""
    occurrence: int | None = None

    def applies_to_version(self, version: str | None) -> bool:
        if not self.versions or not version:
            return True
        try:
            return Version(version) in SpecifierSet(self.versions)
        except InvalidVersion:
            return True


def load(path: Path = CATALOGUE_FILE, target: str | None = None) -> list[Entry]:
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise CatalogueError(f"{path}: {exc}") from None
    entries: list[Entry] = []
    seen: set[str] = set()
    for raw in data.get("mutant", []):
        ident = raw.get("id", "?")
        missing = [k for k in _REQUIRED if not str(raw.get(k, "")).strip()]
        if missing:
            raise CatalogueError(f"catalogue entry {ident}: missing {', '.join(missing)}")
        unknown = set(raw) - {*_REQUIRED, "description", "versions", "occurrence"}
        if unknown:
            raise CatalogueError(f"catalogue entry {ident}: unknown keys {sorted(unknown)}")
        if ident in seen:
            raise CatalogueError(f"catalogue entry {ident}: duplicate id")
        seen.add(ident)
        if raw["kind"] not in KINDS:
            raise CatalogueError(f"catalogue entry {ident}: kind {raw['kind']!r} not in {KINDS}")
        if not _PROPERTY.match(raw["property"]):
            raise CatalogueError(f"catalogue entry {ident}: unknown property {raw['property']!r}")
        if raw.get("versions"):
            try:
                SpecifierSet(raw["versions"])
            except InvalidSpecifier:
                raise CatalogueError(
                    f"catalogue entry {ident}: bad versions {raw['versions']!r}"
                ) from None
        entry = Entry(**{k: raw[k] for k in raw})
        if target is None or entry.target == target:
            entries.append(entry)
    return entries


def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Qualified name -> node for top-level functions and methods of top-level classes."""
    out: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            out[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef):
                    out[f"{node.name}.{sub.name}"] = sub
    return out


def apply(entry: Entry, source: str) -> str:
    """The source with the entry's change made; raises CatalogueError if it does not apply."""
    where = f"catalogue entry {entry.id} ({entry.file}:{entry.function})"
    tree = ast.parse(source)
    func = _functions(tree).get(entry.function)
    if func is None:
        raise NoLongerApplies(
            f"{where}: does not apply, no function {entry.function} in the target source",
            f"no function {entry.function} in {entry.file}",
        )
    lines = source.splitlines(keepends=True)
    before = [ln.strip() for ln in entry.before.strip("\n").splitlines()]
    if not before or not all(before):
        raise CatalogueError(f"{where}: `before` must be whole non-empty lines")
    first, last = func.lineno, func.end_lineno or func.lineno
    matches = [
        i
        for i in range(first - 1, last - len(before) + 1)
        if all(lines[i + j].strip() == before[j] for j in range(len(before)))
    ]
    if not matches:
        raise NoLongerApplies(
            f"{where}: does not apply, `before` not found: {entry.before!r}",
            f"`before` not found in {entry.file}:{entry.function}",
        )
    if entry.occurrence is None and len(matches) > 1:
        lns = ", ".join(str(i + 1) for i in matches)
        raise CatalogueError(f"{where}: `before` matches {len(matches)} times (lines {lns})")
    pick = (entry.occurrence or 1) - 1
    if not 0 <= pick < len(matches):
        raise CatalogueError(f"{where}: occurrence {entry.occurrence} of {len(matches)} matches")
    i = matches[pick]
    indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
    newline = "\r\n" if lines[i].endswith("\r\n") else "\n"
    after = textwrap.dedent(entry.after.strip("\n")).splitlines()
    replacement = [(indent + ln if ln.strip() else "") + newline for ln in after]
    mutated = "".join(lines[:i] + replacement + lines[i + len(before) :])
    if mutated == source:
        raise CatalogueError(f"{where}: `after` makes no change")
    try:
        mutated_tree = ast.parse(mutated)
    except SyntaxError as exc:
        raise CatalogueError(f"{where}: the change does not parse: {exc.msg}") from None
    changed = changed_functions(tree, mutated_tree)
    if changed != [entry.function]:
        raise CatalogueError(f"{where}: the change must touch exactly that function, got {changed}")
    return mutated


def no_longer_applies_line(entry: Entry, what: str) -> dict[str, str]:
    """The report's entry for a named mutant that no longer applies to a developer's tree."""
    return {
        "id": entry.id,
        "file": entry.file,
        "function": entry.function,
        "property": entry.property,
        "before": entry.before,
        "reason": (
            f"no longer applies: {what} - the code it mutates changed or is gone; if the "
            f"write it stands for was removed, the properties ({entry.property}) say so"
        ),
    }


def changed_functions(a: ast.Module, b: ast.Module) -> list[str]:
    """Qualified names of functions whose code differs; '<module level>' if anything else does."""
    fa, fb = _functions(a), _functions(b)
    changed = sorted(
        q
        for q in fa.keys() | fb.keys()
        if q not in fa or q not in fb or ast.dump(fa[q]) != ast.dump(fb[q])
    )

    def skeleton(tree: ast.Module) -> str:
        keep = [n for n in tree.body if not isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        parts = []
        for n in keep:
            if isinstance(n, ast.ClassDef):
                n = ast.ClassDef(
                    name=n.name,
                    bases=n.bases,
                    keywords=n.keywords,
                    body=[
                        x
                        for x in n.body
                        if not isinstance(x, ast.FunctionDef | ast.AsyncFunctionDef)
                    ],
                    decorator_list=n.decorator_list,
                )
            parts.append(ast.dump(n))
        return "\n".join(parts)

    if skeleton(a) != skeleton(b):
        changed.append("<module level>")
    return changed


def mutated_function(entry: Entry, module: cst.Module, mutated_source: str) -> cst.FunctionDef:
    """The entry's function as it reads after the change (checked to be trampoline-able)."""
    for qual, _cls, node in function_index(module).values():
        if qual == entry.function and not is_trampolinable(node):
            raise CatalogueError(
                f"catalogue entry {entry.id}: {entry.function} is decorated; mutmut's trampolines "
                "cannot run a mutant of it"
            )
    new = cst.parse_module(mutated_source)
    for qual, _cls, node in function_index(new).values():
        if qual == entry.function:
            return node
    raise CatalogueError(f"catalogue entry {entry.id}: {entry.function} vanished")  # unreachable
