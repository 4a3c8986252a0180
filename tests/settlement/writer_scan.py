"""S8: a static scan for code that writes conversation items.

A *write reference* is any mention of a conversation-writing store method
(:data:`ledger.store.CONVERSATION_WRITERS`) as an attribute, a name or a
string (``getattr(store, "append_turn")``), or an SQL string that inserts
into, updates or deletes from the ``items`` table. Only the owner and the
server may hold one; the store defines the writers and is exempt.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from ledger.store import CONVERSATION_WRITERS

ALLOWED = frozenset({"ledger/owner.py", "ledger/server.py", "ledger/store.py"})
_ITEM_SQL = re.compile(
    r"\b(insert\s+(or\s+\w+\s+)?into|replace\s+into|update|delete\s+from)\s+items\b", re.I
)


@dataclass(frozen=True)
class WriteReference:
    module: str
    line: int
    function: str | None
    what: str


class _Finder(ast.NodeVisitor):
    def __init__(self, module: str) -> None:
        self.module = module
        self.found: list[WriteReference] = []
        self._functions: list[str] = []

    def _add(self, node: ast.AST, what: str) -> None:
        function = ".".join(self._functions) or None
        self.found.append(WriteReference(self.module, getattr(node, "lineno", 0), function, what))

    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._functions.append(node.name)
        self.generic_visit(node)
        self._functions.pop()

    visit_FunctionDef = _visit_function
    visit_AsyncFunctionDef = _visit_function

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._functions.append(node.name)
        self.generic_visit(node)
        self._functions.pop()

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in CONVERSATION_WRITERS:
            self._add(node, f".{node.attr}")
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in CONVERSATION_WRITERS:
            self._add(node, node.id)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str):
            if node.value in CONVERSATION_WRITERS:
                self._add(node, repr(node.value))
            elif _ITEM_SQL.search(node.value):
                self._add(node, "SQL writing items")


def scan_source(source: str, module: str) -> list[WriteReference]:
    finder = _Finder(module)
    finder.visit(ast.parse(source, filename=module))
    return finder.found


def scan_package(root: Path) -> list[WriteReference]:
    """Every write reference in the ``ledger`` package under ``root``."""
    found: list[WriteReference] = []
    for path in sorted((root / "ledger").rglob("*.py")):
        module = path.relative_to(root).as_posix()
        found.extend(scan_source(path.read_text(encoding="utf-8"), module))
    return found


def offenders(found: list[WriteReference]) -> list[WriteReference]:
    return [ref for ref in found if ref.module not in ALLOWED]
