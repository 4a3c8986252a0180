"""ctxaudit's extension of mutmut: two operator families, and a kind for every mutant.

mutmut (3.8) builds mutants with libcst: ``mutmut.mutation.file_mutation.MutationVisitor``
walks a module and calls every ``(node type, operator)`` pair of an operator list on
each node; each operator yields replacement nodes. This module extends that machinery
in one place and in the way mutmut is built to be extended - by handing the visitor a
longer operator list - and adds nothing else to mutmut:

``removed-write`` (operator ``statement``)
    Deletes one small statement of a line that stores, meters or resets state: a call
    used as a statement (``cap.record(x)``, ``await store(t)``), or an assignment,
    annotated assignment or augmented assignment whose target is an attribute or a
    subscript (``self.n += 1``, ``d[k] = v``). When the line held only that statement it
    becomes ``pass``, so a block never becomes empty. Calls to "quiet" functions -
    logging and printing, configured per target (``quiet_calls``) - are not writes any
    property can observe and are neither deleted nor mutated inside.

``wrong-comparison``
    - ``boundary`` / ``equality``: mutmut's own ``<``/``<=``, ``>``/``>=`` and ``==``/``!=``
      swaps, counted as this kind;
    - ``identity`` / ``membership``: mutmut's ``is``/``is not`` and ``in``/``not in``
      swaps, counted as this kind (they reverse the sense of a comparison);
    - ``sense``: ``>`` <-> ``<`` and ``>=`` <-> ``<=``;
    - ``operand``: one operand of an ordering or equality comparison (``<``, ``<=``,
      ``>``, ``>=``, ``==``, ``!=``) that is a local name or a ``self.<attr>`` is replaced
      by another value *of the same kind* in scope of the enclosing function
      (GR-GAP-062: ``budget_used > threshold`` -> ``cumulative_prompt_tok > threshold``).

``other``
    Every other mutant mutmut makes (numbers, strings, ``None`` assignments, argument
    removal, ``and``/``or``, arithmetic, ...).

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

Every mutant carries ``operator`` (the names above, or mutmut's operator function name
without ``operator_``) and ``kind``.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import libcst as cst
import libcst.matchers as m
from libcst.metadata import MetadataWrapper, PositionProvider
from mutmut.mutation.file_mutation import Mutation, MutationVisitor, OuterFunctionProvider
from mutmut.mutation.mutators import mutation_operators as MUTMUT_OPERATORS
from mutmut.mutation.pragma_handling import IgnoredCode, PragmaVisitor

REMOVED_WRITE = "removed-write"
WRONG_COMPARISON = "wrong-comparison"
OTHER = "other"
KINDS = (REMOVED_WRITE, WRONG_COMPARISON, OTHER)
#: the kinds the gate requires to be killed
GATED_KINDS = (REMOVED_WRITE, WRONG_COMPARISON)

OPERAND_CANDIDATES = 3

DEFAULT_QUIET_CALLS = (
    "logger.*",
    "log.*",
    "_logger.*",
    "_log.*",
    "logging.*",
    "LOG.*",
    "print",
)

_SENSE: dict[type[cst.CSTNode], type[cst.CSTNode]] = {
    cst.GreaterThan: cst.LessThan,
    cst.LessThan: cst.GreaterThan,
    cst.GreaterThanEqual: cst.LessThanEqual,
    cst.LessThanEqual: cst.GreaterThanEqual,
}
_ORDERING = (cst.GreaterThan, cst.LessThan, cst.GreaterThanEqual, cst.LessThanEqual)
_EQUALITY = (cst.Equal, cst.NotEqual)
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


@dataclass
class CtxMutation(Mutation):
    """A mutmut ``Mutation`` with what ctxaudit needs to report it."""

    operator: str = ""
    kind: str = OTHER
    #: 1-based line, 0-based column of the original node (libcst's convention)
    start: tuple[int, int] = (0, 0)
    end: tuple[int, int] = (0, 0)


@dataclass(frozen=True)
class OperatorSettings:
    quiet_calls: tuple[str, ...] = DEFAULT_QUIET_CALLS
    operand_candidates: int = OPERAND_CANDIDATES


def dotted_name(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted_name(node.value)
        return None if base is None else f"{base}.{node.attr.value}"
    return None


def is_quiet_call(node: cst.CSTNode, patterns: Sequence[str]) -> bool:
    if not isinstance(node, cst.Call):
        return False
    name = dotted_name(node.func)
    return name is not None and any(fnmatch.fnmatchcase(name, p) for p in patterns)


# ── removed-write ────────────────────────────────────────────────────────────


def _writes_attribute_or_subscript(target: cst.BaseExpression) -> bool:
    if isinstance(target, cst.Attribute | cst.Subscript):
        return True
    if isinstance(target, cst.Tuple | cst.List):
        return any(_writes_attribute_or_subscript(e.value) for e in target.elements)
    return False


def is_write(stmt: cst.BaseSmallStatement, quiet_calls: Sequence[str]) -> bool:
    if isinstance(stmt, cst.Expr):
        value = stmt.value
        if isinstance(value, cst.Await):
            value = value.expression
        return isinstance(value, cst.Call) and not is_quiet_call(value, quiet_calls)
    if isinstance(stmt, cst.Assign):
        return any(_writes_attribute_or_subscript(t.target) for t in stmt.targets)
    if isinstance(stmt, cst.AugAssign):
        return _writes_attribute_or_subscript(stmt.target)
    if isinstance(stmt, cst.AnnAssign):
        return stmt.value is not None and _writes_attribute_or_subscript(stmt.target)
    return False


def removed_write(
    node: cst.SimpleStatementLine, quiet_calls: Sequence[str] = DEFAULT_QUIET_CALLS
) -> Iterable[cst.SimpleStatementLine]:
    for i, stmt in enumerate(node.body):
        if not is_write(stmt, quiet_calls):
            continue
        rest: list[cst.BaseSmallStatement] = [*node.body[:i], *node.body[i + 1 :]]
        if not rest:
            rest = [cst.Pass()]
        rest[-1] = rest[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
        yield node.with_changes(body=rest)


# ── wrong-comparison ─────────────────────────────────────────────────────────


def comparison_sense(node: cst.ComparisonTarget) -> Iterable[cst.ComparisonTarget]:
    new = _SENSE.get(type(node.operator))
    if new is not None:
        yield node.with_changes(operator=new())


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
                if isinstance(t.operator, _ORDERING):
                    self.operands[key].evidence.add("number")
                elif isinstance(t.operator, _EQUALITY):
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
        if not all(isinstance(t.operator, _ORDERING + _EQUALITY) for t in adjacent):
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


# ── kinds and the visitor ────────────────────────────────────────────────────


def classify(operator: str, node: cst.CSTNode) -> tuple[str, str]:
    """(operator name as reported, kind) for a mutant made by ``operator`` on ``node``."""
    if operator == "swap_op" and isinstance(node, cst.ComparisonTarget):
        name = "equality" if isinstance(node.operator, _EQUALITY) else "boundary"
        return name, WRONG_COMPARISON
    if operator == "keywords" and isinstance(node, cst.Is | cst.IsNot):
        return "identity", WRONG_COMPARISON
    if operator == "keywords" and isinstance(node, cst.In | cst.NotIn):
        return "membership", WRONG_COMPARISON
    if operator in ("sense", "operand"):
        return operator, WRONG_COMPARISON
    if operator == "statement":
        return operator, REMOVED_WRITE
    return operator, OTHER


class CtxMutationVisitor(MutationVisitor):
    """mutmut's visitor with the ctxaudit operators added and every mutant tagged.

    Apart from the operator list, the only changes are: quiet calls are skipped with
    everything inside them, and each mutation records operator, kind and position.
    """

    METADATA_DEPENDENCIES = (PositionProvider, OuterFunctionProvider)

    def __init__(self, ignored_code: IgnoredCode, settings: OperatorSettings | None = None):
        self.settings = settings or OperatorSettings()
        self._function: cst.FunctionDef | None = None
        self._operand_cache: dict[int, dict[str, Operand]] = {}
        self._named: list[tuple[type, str, Callable[[cst.CSTNode], Iterable[cst.CSTNode]]]] = [
            (t, op.__name__.removeprefix("operator_"), op) for t, op in MUTMUT_OPERATORS
        ]
        self._named += [
            (cst.SimpleStatementLine, "statement", self._removed_write),
            (cst.ComparisonTarget, "sense", comparison_sense),  # type: ignore[list-item]
            (cst.Comparison, "operand", self._operand),
        ]
        super().__init__([(t, op) for t, _, op in self._named], ignored_code, None)

    def _removed_write(self, node: cst.CSTNode) -> Iterable[cst.CSTNode]:
        assert isinstance(node, cst.SimpleStatementLine)
        return removed_write(node, self.settings.quiet_calls)

    def _operand(self, node: cst.CSTNode) -> Iterable[cst.CSTNode]:
        assert isinstance(node, cst.Comparison)
        func = self._function
        if func is None:
            return ()
        operands = self._operand_cache.get(id(func))
        if operands is None:
            operands = self._operand_cache[id(func)] = scan_operands(func)
        return operand_replacements(node, operands, self.settings.operand_candidates)

    def on_visit(self, node: cst.CSTNode) -> bool:
        if is_quiet_call(node, self.settings.quiet_calls):
            return False
        func = self.get_metadata(OuterFunctionProvider, node, None)
        self._function = func if isinstance(func, cst.FunctionDef) else None
        return super().on_visit(node)

    def _create_mutations(self, node: cst.CSTNode) -> None:
        for t, name, operator in self._named:
            if not isinstance(node, t):
                continue
            for mutated in operator(node):
                if self._removes_ignored_code(node, mutated):
                    continue
                reported, kind = classify(name, node)
                pos = self.get_metadata(PositionProvider, node, None)
                self.mutations.append(
                    CtxMutation(
                        original_node=node,
                        mutated_node=mutated,
                        contained_by_top_level_function=self._function,
                        operator=reported,
                        kind=kind,
                        start=(pos.start.line, pos.start.column) if pos else (0, 0),
                        end=(pos.end.line, pos.end.column) if pos else (0, 0),
                    )
                )


def create_mutations(
    source: str, filename: str, settings: OperatorSettings | None = None
) -> tuple[cst.Module, list[CtxMutation]]:
    """Parse ``source`` and make every mutant (mutmut's and ours) inside its functions.

    Like ``mutmut.mutation.file_mutation.create_mutations``, but with our operators,
    honouring ``# pragma: no mutate`` and without reading mutmut's project config.
    The returned module is the tree the mutations' nodes belong to.
    """
    module = cst.parse_module(source)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    pragma = PragmaVisitor(filename)
    wrapper.visit(pragma)
    ignored = IgnoredCode(pragma.no_mutate_lines, pragma.ignore_node_lines, set())
    visitor = CtxMutationVisitor(ignored, settings)
    wrapper.visit(visitor)
    mutations = [
        mu
        for mu in visitor.mutations
        if isinstance(mu, CtxMutation)
        and isinstance(mu.contained_by_top_level_function, cst.FunctionDef)
    ]
    return module, mutations


def function_index(module: cst.Module) -> dict[int, tuple[str, str | None, cst.FunctionDef]]:
    """id(FunctionDef) -> (qualified name, class name, node) for mutmut's trampoline targets."""
    out: dict[int, tuple[str, str | None, cst.FunctionDef]] = {}
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef):
            out[id(stmt)] = (stmt.name.value, None, stmt)
        elif isinstance(stmt, cst.ClassDef) and isinstance(stmt.body, cst.IndentedBlock):
            for method in stmt.body.body:
                if isinstance(method, cst.FunctionDef):
                    qual = f"{stmt.name.value}.{method.name.value}"
                    out[id(method)] = (qual, stmt.name.value, method)
    return out


def is_trampolinable(function: cst.FunctionDef) -> bool:
    """mutmut only trampolines undecorated functions and static/class methods."""
    if not function.decorators:
        return True
    return len(function.decorators) == 1 and m.matches(
        function.decorators[0].decorator, m.Name("staticmethod") | m.Name("classmethod")
    )
