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
    where = "cumulative_prompt_tok"  # optional: a regex the file's source must match
    where_file = "engine/eval_cap.py"  # optional: the file `where` reads (default: file)
    before = "if budget_used > threshold:"
    after = "if cumulative_prompt_tok > threshold:"
    occurrence = 1                   # optional: which match, when `before` matches twice
    description = "..."

``before`` is one or more whole source lines, compared with surrounding whitespace
stripped; ``after`` replaces them at the indentation of the first matched line (its own
relative indentation kept). The entry applies when ``before`` occurs inside the named
function exactly once (or ``occurrence`` picks one), the result parses (by ``ast``; by
libcst where the tree's syntax is newer than this interpreter's), and only that function
changed. An entry that does not apply raises :class:`CatalogueError`: nothing
is skipped silently. An entry whose ``versions`` excludes the target's version is
reported as not applicable to that version.

``where`` says which trees an entry is for by their code, for targets whose trees have
no version to compare (a lightspeed-stack branch is ``main-gcd1a048``): a regular
expression searched (``re.search``, ``re.MULTILINE``) in the named file's source, or in
``where_file``'s where what the entry needs lives in another file. A tree
whose file does not match it, or has no such file, is one the entry is not for: the entry
is reported as not applicable to that tree, with the reason (:meth:`Entry.where_reason`).
Where ``where`` matches, the entry must apply like any other (below): ``where`` chooses
trees, it does not excuse an entry whose ``before`` is not found.

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
import builtins
import functools
import re
import textwrap
import tomllib
from dataclasses import dataclass
from pathlib import Path

import libcst as cst
from libcst.metadata import PositionProvider
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from ctxaudit.properties import CATALOGUE
from mutation.operators import KINDS, function_index, is_trampolinable

HERE = Path(__file__).resolve().parent
CATALOGUE_FILE = HERE / "catalogue.toml"
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
    where: str = ""
    where_file: str = ""
    occurrence: int | None = None

    @builtins.property  # the field ``property`` shadows the builtin in this class body
    def where_in(self) -> str:
        """The file whose source ``where`` is searched in."""
        return self.where_file or self.file

    def applies_to_version(self, version: str | None) -> bool:
        if not self.versions or not version:
            return True
        try:
            return Version(version) in SpecifierSet(self.versions)
        except InvalidVersion:
            return True

    def where_reason(self, source: str | None) -> str | None:
        """Why the tree whose file reads ``source`` (None: no such file) is not one the
        entry is for, by ``where``; None when it is."""
        if not self.where:
            return None
        if source is None:
            return f"{self.where_in} is not in the tree (the entry is for trees matching `where`)"
        if re.search(self.where, source, re.MULTILINE):
            return None
        return f"{self.where_in} has no code matching `where` {self.where!r}"


def load(path: Path = CATALOGUE_FILE, target: str | None = None) -> list[Entry]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise CatalogueError(f"{path}: {exc}") from None
    entries: list[Entry] = []
    seen: set[str] = set()
    for raw in data.get("mutant", []):
        ident = raw.get("id", "?")
        missing = [k for k in _REQUIRED if not str(raw.get(k, "")).strip()]
        if missing:
            raise CatalogueError(f"catalogue entry {ident}: missing {', '.join(missing)}")
        unknown = set(raw) - {
            *_REQUIRED,
            "description",
            "versions",
            "where",
            "where_file",
            "occurrence",
        }
        if unknown:
            raise CatalogueError(f"catalogue entry {ident}: unknown keys {sorted(unknown)}")
        if ident in seen:
            raise CatalogueError(f"catalogue entry {ident}: duplicate id")
        seen.add(ident)
        if raw["kind"] not in KINDS:
            raise CatalogueError(f"catalogue entry {ident}: kind {raw['kind']!r} not in {KINDS}")
        if raw["property"] not in CATALOGUE:
            raise CatalogueError(f"catalogue entry {ident}: unknown property {raw['property']!r}")
        if raw.get("versions"):
            try:
                SpecifierSet(raw["versions"])
            except InvalidSpecifier:
                raise CatalogueError(
                    f"catalogue entry {ident}: bad versions {raw['versions']!r}"
                ) from None
        if raw.get("where"):
            try:
                re.compile(raw["where"], re.MULTILINE)
            except re.error as exc:
                raise CatalogueError(f"catalogue entry {ident}: bad where: {exc}") from None
        entry = Entry(**{k: raw[k] for k in raw})
        if target is None or entry.target == target:
            entries.append(entry)
    return entries


@dataclass(frozen=True)
class _Outline:
    """A module as the checks read it: each function's lines and code, and the rest."""

    #: qualified name -> (first line, last line, code) of top-level functions and
    #: methods of top-level classes
    functions: dict[str, tuple[int, int, str]]
    #: everything else: the module without its functions
    rest: str


@functools.lru_cache(maxsize=32)  # a file's source is read once for all its entries
def _outline(source: str, grammar: str) -> _Outline:
    """The source's outline, parsed by ``ast`` (fast) or, for syntax newer than this
    interpreter's (a tree's ``type X = ...`` under Python 3.11), by libcst."""
    if grammar == "ast":
        return _ast_outline(ast.parse(source))
    return _cst_outline(cst.parse_module(source))


def _ast_outline(tree: ast.Module) -> _Outline:
    functions: dict[str, tuple[int, int, str]] = {}
    rest = []
    defs = ast.FunctionDef | ast.AsyncFunctionDef
    for node in tree.body:
        if isinstance(node, defs):
            functions[node.name] = (node.lineno, node.end_lineno or node.lineno, ast.dump(node))
            continue
        if isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, defs):
                    first, last = sub.lineno, sub.end_lineno or sub.lineno
                    functions[f"{node.name}.{sub.name}"] = (first, last, ast.dump(sub))
            node = ast.ClassDef(
                name=node.name,
                bases=node.bases,
                keywords=node.keywords,
                body=[
                    x
                    for x in node.body
                    if not isinstance(x, ast.FunctionDef | ast.AsyncFunctionDef)
                ],
                decorator_list=node.decorator_list,
            )
        rest.append(ast.dump(node))
    return _Outline(functions, "\n".join(rest))


def _cst_outline(module: cst.Module) -> _Outline:
    positions = cst.MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    functions = {
        qual: (positions[node].start.line, positions[node].end.line, module.code_for_node(node))
        for qual, _cls, node in function_index(module).values()
    }
    rest = []
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef):
            continue
        if isinstance(stmt, cst.ClassDef) and isinstance(stmt.body, cst.IndentedBlock):
            kept = [x for x in stmt.body.body if not isinstance(x, cst.FunctionDef)]
            stmt = stmt.with_changes(body=stmt.body.with_changes(body=kept))
        rest.append(module.code_for_node(stmt))
    return _Outline(functions, "\n".join(rest))


def _changed(a: _Outline, b: _Outline) -> list[str]:
    """Qualified names of functions whose code differs; '<module level>' if anything else does."""
    fa, fb = a.functions, b.functions
    changed = sorted(
        q for q in fa.keys() | fb.keys() if q not in fa or q not in fb or fa[q][2] != fb[q][2]
    )
    if a.rest != b.rest:
        changed.append("<module level>")
    return changed


def apply(entry: Entry, source: str) -> str:
    """The source with the entry's change made; raises CatalogueError if it does not apply."""
    where = f"catalogue entry {entry.id} ({entry.file}:{entry.function})"
    try:
        grammar = "ast"
        outline = _outline(source, grammar)
    except SyntaxError:
        grammar = "libcst"
        outline = _outline(source, grammar)
    func = outline.functions.get(entry.function)
    if func is None:
        raise NoLongerApplies(
            f"{where}: does not apply, no function {entry.function} in the target source",
            f"no function {entry.function} in {entry.file}",
        )
    lines = source.splitlines(keepends=True)
    before = [ln.strip() for ln in entry.before.strip("\n").splitlines()]
    if not before or not all(before):
        raise CatalogueError(f"{where}: `before` must be whole non-empty lines")
    first, last, _code = func
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
        mutated_outline = _outline(mutated, grammar)
    except SyntaxError as exc:
        raise CatalogueError(f"{where}: the change does not parse: {exc.msg}") from None
    except cst.ParserSyntaxError as exc:
        raise CatalogueError(f"{where}: the change does not parse: {exc.message}") from None
    changed = _changed(outline, mutated_outline)
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
