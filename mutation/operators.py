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

``wrong-comparison`` and ``removed-write`` beyond one token
    ``ifexp_branch`` (a conditional expression replaced by either branch), ``clause``
    (one clause of an ``and``/``or`` dropped) and ``bound`` (a ``range`` or slice bound
    moved by one) are wrong-comparison; ``branch_assign`` (an assignment to a local in
    one branch of an ``if``/``try`` deleted) and ``await_result`` (an awaited result
    ignored, its call kept) are removed-write. Their rules: :mod:`mutation.operators_beyond`.

``other``
    Every other mutant mutmut makes (numbers, strings, ``None`` assignments, argument
    removal, ``and``/``or``, arithmetic, ...).

"Same kind" (the operand heuristic) is :mod:`mutation.operators_operand`.

Every mutant carries ``operator`` (the names above, or mutmut's operator function name
without ``operator_``) and ``kind``.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import libcst as cst
import libcst.matchers as m
from libcst.metadata import MetadataWrapper, PositionProvider
from mutmut.mutation.file_mutation import Mutation, MutationVisitor, OuterFunctionProvider
from mutmut.mutation.mutators import mutation_operators as MUTMUT_OPERATORS
from mutmut.mutation.pragma_handling import IgnoredCode, PragmaVisitor

from mutation import operators_beyond as beyond
from mutation.operators_operand import EQUALITY, operand_replacements, scan_operands
from mutation.operators_operand import OPERAND_CANDIDATES as OPERAND_CANDIDATES
from mutation.operators_operand import Operand as Operand
from mutation.operators_operand import name_tokens as name_tokens
from mutation.operators_operand import operand_key as operand_key

REMOVED_WRITE = "removed-write"
WRONG_COMPARISON = "wrong-comparison"
OTHER = "other"
KINDS = (REMOVED_WRITE, WRONG_COMPARISON, OTHER)
#: the kinds the gate requires to be killed
GATED_KINDS = (REMOVED_WRITE, WRONG_COMPARISON)

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

#: the operators of :mod:`mutation.operators_beyond`, by the kind each belongs to
BEYOND_WRONG_COMPARISON = ("ifexp_branch", "clause", "bound")
BEYOND_REMOVED_WRITE = ("branch_assign", "await_result")


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
    #: make the operators of :mod:`mutation.operators_beyond` too (off: the operator set
    #: before them, which the tests compare ids against)
    beyond_one_line: bool = True


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


# ── kinds and the visitor ────────────────────────────────────────────────────


def classify(operator: str, node: cst.CSTNode) -> tuple[str, str]:
    """(operator name as reported, kind) for a mutant made by ``operator`` on ``node``."""
    if operator == "swap_op" and isinstance(node, cst.ComparisonTarget):
        name = "equality" if isinstance(node.operator, EQUALITY) else "boundary"
        return name, WRONG_COMPARISON
    if operator == "keywords" and isinstance(node, cst.Is | cst.IsNot):
        return "identity", WRONG_COMPARISON
    if operator == "keywords" and isinstance(node, cst.In | cst.NotIn):
        return "membership", WRONG_COMPARISON
    if operator in ("sense", "operand", *BEYOND_WRONG_COMPARISON):
        return operator, WRONG_COMPARISON
    if operator in ("statement", *BEYOND_REMOVED_WRITE):
        return operator, REMOVED_WRITE
    return operator, OTHER


def changes_cast_type(node: cst.CSTNode, mutated: cst.CSTNode) -> bool:
    """A mutant of a ``cast(T, value)`` call that changes only ``T``: ``typing.cast``
    returns its value unchanged at run time, so no input tells the two apart."""
    if not (isinstance(node, cst.Call) and isinstance(mutated, cst.Call)):
        return False
    func = node.func
    named = isinstance(func, cst.Name) and func.value == "cast"
    if not (named or (isinstance(func, cst.Attribute) and func.attr.value == "cast")):
        return False
    if len(node.args) != 2 or len(mutated.args) != 2:
        return False
    return func.deep_equals(mutated.func) and node.args[1].deep_equals(mutated.args[1])


class CtxMutationVisitor(MutationVisitor):
    """mutmut's visitor with the ctxaudit operators added and every mutant tagged.

    Apart from the operator list, the only changes are: quiet calls are skipped with
    everything inside them, so is a change of a ``cast``'s type alone (equivalent by
    construction), and each mutation records operator, kind and position. For the
    operators beyond one token it also notes, top-down, the statement lines directly in
    a branch of an ``if``/``try`` and the inner nodes of ``and``/``or`` chains.
    """

    METADATA_DEPENDENCIES = (PositionProvider, OuterFunctionProvider)

    def __init__(self, ignored_code: IgnoredCode, settings: OperatorSettings | None = None):
        self.settings = settings or OperatorSettings()
        self._function: cst.FunctionDef | None = None
        self._operand_cache: dict[int, dict[str, Operand]] = {}
        self._branch_lines: set[int] = set()
        self._inner_clauses: set[int] = set()
        self._named: list[tuple[type, str, Callable[[cst.CSTNode], Iterable[cst.CSTNode]]]] = [
            (t, op.__name__.removeprefix("operator_"), op) for t, op in MUTMUT_OPERATORS
        ]
        self._named += [
            (cst.SimpleStatementLine, "statement", self._removed_write),
            (cst.ComparisonTarget, "sense", comparison_sense),  # type: ignore[list-item]
            (cst.Comparison, "operand", self._operand),
        ]
        if self.settings.beyond_one_line:
            lines = (cst.SimpleStatementLine, cst.SimpleStatementSuite)
            self._named += [
                (cst.IfExp, "ifexp_branch", beyond.ifexp_branch),  # type: ignore[list-item]
                (cst.BooleanOperation, "clause", self._clause),
                (cst.Call, "bound", beyond.bound),  # type: ignore[list-item]
                (cst.Slice, "bound", beyond.bound),  # type: ignore[list-item]
                (lines, "branch_assign", self._branch_assign),  # type: ignore[list-item]
                (lines, "await_result", beyond.await_result),  # type: ignore[list-item]
            ]
        super().__init__([(t, op) for t, _, op in self._named], ignored_code, None)

    def _removed_write(self, node: cst.CSTNode) -> Iterable[cst.CSTNode]:
        assert isinstance(node, cst.SimpleStatementLine)
        return removed_write(node, self.settings.quiet_calls)

    def _clause(self, node: cst.CSTNode) -> Iterable[cst.CSTNode]:
        assert isinstance(node, cst.BooleanOperation)
        if id(node) in self._inner_clauses:
            return ()
        return beyond.clause(node)

    def _branch_assign(self, node: cst.CSTNode) -> Iterable[cst.CSTNode]:
        if id(node) not in self._branch_lines:
            return ()
        assert isinstance(node, cst.SimpleStatementLine | cst.SimpleStatementSuite)
        return beyond.branch_assign(node)

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
        if self.settings.beyond_one_line:
            self._branch_lines.update(id(s) for s in beyond.branch_statements(node))
            if isinstance(node, cst.BooleanOperation) and id(node) not in self._inner_clauses:
                self._inner_clauses.update(id(n) for n in beyond.boolean_chain(node)[2])
        return super().on_visit(node)

    def _create_mutations(self, node: cst.CSTNode) -> None:
        for t, name, operator in self._named:
            if not isinstance(node, t):
                continue
            for mutated in operator(node):
                if self._removes_ignored_code(node, mutated) or changes_cast_type(node, mutated):
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
