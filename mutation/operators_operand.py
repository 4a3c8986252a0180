"""The ``operand`` operator of ``wrong-comparison`` (see :mod:`mutation.operators`): one
operand of an ordering or equality comparison that is a local name or ``self.<attr>`` is
replaced by another value *of the same kind* in scope of the enclosing function
(GR-GAP-062: ``budget_used > threshold`` -> ``cumulative_prompt_tok > threshold``).

"Same kind" (the operand heuristic), deterministic and local to one function:

1. Candidates are the function's parameters, the names it assigns (``=``, ``+=``,
   annotated, ``for``/``with``/walrus targets) and the ``self.<attr>`` it mentions.
2. Each candidate gets a *value kind* from evidence inside the function: ``number`` when
   it is assigned a number literal, arithmetic, or a call of ``int``/``float``/``len``/
   ``max``/``min``/``sum``/``abs``/``round``, is augmented with an arithmetic operator,
   is an operand of ``<``/``<=``/``>``/``>=`` or of arithmetic, is compared with a number
   literal, or is annotated ``int``/``float``; ``str`` when it is assigned a string
   literal / f-string / ``str(...)`` or compared with a string literal, or annotated
   ``str``. A name with evidence of both kinds, or of none, gets no replacement.
3. Each candidate gets *name tokens*: its name (for ``self.x``: ``x``) split at ``_`` and
   camelCase, lower-cased, with a plural ``s`` dropped and ``tok``/``cnt``/``num``/``sec``
   spelled out; a local also takes the tokens of the names it is assigned from (the last
   attribute of an attribute chain, never a called function's name).
4. A replacement must have the same value kind and share at least one name token. Of
   those, the ``OPERAND_CANDIDATES`` (3) sharing the most tokens are used, ties broken by
   first appearance in the function. The other operand of the same comparison is never
   used (that would compare a value with itself).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import libcst as cst

OPERAND_CANDIDATES = 3

ORDERING = (cst.GreaterThan, cst.LessThan, cst.GreaterThanEqual, cst.LessThanEqual)
EQUALITY = (cst.Equal, cst.NotEqual)
_ARITH_AUG = (
    cst.AddAssign,
    cst.SubtractAssign,
    cst.MultiplyAssign,
    cst.DivideAssign,
    cst.FloorDivideAssign,
    cst.ModuloAssign,
    cst.PowerAssign,
)
_ARITH = (
    cst.Add,
    cst.Subtract,
    cst.Multiply,
    cst.Divide,
    cst.FloorDivide,
    cst.Modulo,
    cst.Power,
)
_NUMBER_CALLS = frozenset({"int", "float", "len", "max", "min", "sum", "abs", "round"})
_TOKEN_SPELLING = {
    "tok": "token",
    "toks": "token",
    "tokens": "token",
    "cnt": "count",
    "num": "count",
    "sec": "second",
    "secs": "second",
    "seconds": "second",
}
_STOP_TOKENS = frozenset({"self", "cls", "the", "a", "an", "of", "is"})


def name_tokens(name: str) -> set[str]:
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower().split("_")
    out = set()
    for w in words:
        if not w or w in _STOP_TOKENS:
            continue
        w = _TOKEN_SPELLING.get(w, w)
        if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.add(_TOKEN_SPELLING.get(w, w))
    return out


def operand_key(node: cst.BaseExpression) -> str | None:
    """``name`` for a local name, ``self.attr`` for an attribute of self, else None."""
    if isinstance(node, cst.Name):
        return None if node.value in ("True", "False", "None") else node.value
    if (
        isinstance(node, cst.Attribute)
        and isinstance(node.value, cst.Name)
        and node.value.value == "self"
    ):
        return f"self.{node.attr.value}"
    return None


@dataclass
class Operand:
    key: str
    order: int
    tokens: set[str] = field(default_factory=set)
    evidence: set[str] = field(default_factory=set)

    @property
    def kind(self) -> str | None:
        return next(iter(self.evidence)) if len(self.evidence) == 1 else None

    def node(self) -> cst.BaseExpression:
        if self.key.startswith("self."):
            return cst.Attribute(value=cst.Name("self"), attr=cst.Name(self.key[5:]))
        return cst.Name(self.key)


def _value_tokens(value: cst.CSTNode) -> set[str]:
    """Tokens of the names a value is computed from (see module docstring, rule 3)."""
    tokens: set[str] = set()

    def walk(n: cst.CSTNode) -> None:
        if isinstance(n, cst.Call):
            func = n.func
            if isinstance(func, cst.Attribute):
                walk(func.value)  # the receiver, not the method name
            for a in n.args:
                walk(a.value)
            return
        if isinstance(n, cst.Attribute):
            tokens.update(name_tokens(n.attr.value))
            return
        if isinstance(n, cst.Name):
            tokens.update(name_tokens(n.value))
            return
        for c in n.children:
            walk(c)

    walk(value)
    return tokens


def _literal_kind(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Integer | cst.Float):
        return "number"
    if isinstance(node, cst.UnaryOperation) and isinstance(
        node.expression, cst.Integer | cst.Float
    ):
        return "number"
    if isinstance(node, cst.SimpleString | cst.FormattedString | cst.ConcatenatedString):
        return "str"
    return None


def _value_kind(value: cst.BaseExpression) -> str | None:
    lit = _literal_kind(value)
    if lit:
        return lit
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, _ARITH):
        return "number"
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
        if value.func.value in _NUMBER_CALLS:
            return "number"
        if value.func.value == "str":
            return "str"
    return None


def _annotation_kind(ann: cst.Annotation | None) -> str | None:
    if ann is None or not isinstance(ann.annotation, cst.Name):
        return None
    return {"int": "number", "float": "number", "str": "str"}.get(ann.annotation.value)


class _ScopeScan(cst.CSTVisitor):
    """Collects the operands of one function and their evidence (rules 1-3)."""

    def __init__(self) -> None:
        self.operands: dict[str, Operand] = {}

    def _get(self, key: str) -> Operand:
        if key not in self.operands:
            op = Operand(key=key, order=len(self.operands))
            op.tokens = name_tokens(key.removeprefix("self."))
            self.operands[key] = op
        return self.operands[key]

    def _assigned(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if isinstance(target, cst.Tuple | cst.List):
            for e in target.elements:
                self._assigned(e.value, None)
            return
        key = operand_key(target)
        if key is None:
            return
        op = self._get(key)
        if value is not None:
            if not key.startswith("self."):
                op.tokens |= _value_tokens(value)
            kind = _value_kind(value)
            if kind:
                op.evidence.add(kind)

    def visit_Param(self, node: cst.Param) -> None:
        op = self._get(node.name.value)
        kind = _annotation_kind(node.annotation)
        if kind:
            op.evidence.add(kind)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._assigned(t.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._assigned(node.target, node.value)
        key = operand_key(node.target)
        kind = _annotation_kind(node.annotation)
        if key and kind:
            self._get(key).evidence.add(kind)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._assigned(node.target, node.value)
        key = operand_key(node.target)
        if key and isinstance(node.operator, _ARITH_AUG):
            self._get(key).evidence.add("number")

    def visit_For(self, node: cst.For) -> None:
        self._assigned(node.target, None)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._assigned(node.asname.name, None)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._assigned(node.target, node.value)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        key = operand_key(node)
        if key:
            self._get(key)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if isinstance(node.operator, _ARITH) and not isinstance(node.operator, cst.Add):
            # `+` also concatenates strings and lists: no evidence either way
            for side in (node.left, node.right):
                key = operand_key(side)
                if key and key in self.operands:
                    self.operands[key].evidence.add("number")

    def visit_Comparison(self, node: cst.Comparison) -> None:
        operands = [node.left, *(t.comparator for t in node.comparisons)]
        for i, t in enumerate(node.comparisons):
            pair = (operands[i], operands[i + 1])
            for a, b in (pair, pair[::-1]):
                key = operand_key(a)
                if key is None or key not in self.operands:
                    continue
                if isinstance(t.operator, ORDERING):
                    self.operands[key].evidence.add("number")
                elif isinstance(t.operator, EQUALITY):
                    kind = _literal_kind(b)
                    if kind:
                        self.operands[key].evidence.add(kind)


def scan_operands(function: cst.FunctionDef) -> dict[str, Operand]:
    scan = _ScopeScan()
    function.visit(scan)
    # names that are only read (globals, builtins, imported names) are not in scope
    # of the assignment rule: keep parameters, assigned names and self attributes
    return scan.operands


def operand_replacements(
    node: cst.Comparison, operands: dict[str, Operand], limit: int = OPERAND_CANDIDATES
) -> Iterator[cst.Comparison]:
    values = [node.left, *(t.comparator for t in node.comparisons)]
    for idx, value in enumerate(values):
        adjacent = node.comparisons[max(idx - 1, 0) : idx + 1]
        if not all(isinstance(t.operator, ORDERING + EQUALITY) for t in adjacent):
            continue
        key = operand_key(value)
        if key is None or key not in operands:
            continue
        me = operands[key]
        if me.kind is None:
            continue
        others = {operand_key(v) for j, v in enumerate(values) if j != idx}
        candidates = [
            c
            for c in operands.values()
            if c.key != key and c.key not in others and c.kind == me.kind and c.tokens & me.tokens
        ]
        candidates.sort(key=lambda c: (-len(c.tokens & me.tokens), c.order, c.key))
        for c in candidates[:limit]:
            new = c.node().with_changes(lpar=value.lpar, rpar=value.rpar)
            if idx == 0:
                yield node.with_changes(left=new)
            else:
                comps = list(node.comparisons)
                comps[idx - 1] = comps[idx - 1].with_changes(comparator=new)
                yield node.with_changes(comparisons=comps)
