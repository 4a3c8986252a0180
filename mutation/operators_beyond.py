"""Operators for faults larger than one token (see :mod:`mutation.operators`).

mutmut's operators change one token where it stands; the faults found in context
handling are often a decision or a store that one path of the code gets wrong. Each
operator here makes one such fault, and each belongs to a gated kind:

``wrong-comparison`` (a decision taken wrongly)
    - ``ifexp_branch``: a conditional expression ``a if c else b`` replaced by ``a`` and
      by ``b`` (the condition is not evaluated; mutmut's own ``if_exp``, of kind
      ``other``, forces it with ``and False`` / ``or True`` and still evaluates it);
    - ``clause``: one clause of an ``and``/``or`` chain dropped (``a and b and c`` ->
      ``b and c``, ``a and c``, ``a and b``); a chain is the run of one operator without
      parentheses, so each mutant drops exactly one clause;
    - ``bound``: a bound of a ``range(...)`` (start and stop, not the step) or of a slice
      (lower and upper, not the step) moved by one, both ways (``range(n)`` ->
      ``range(n + 1)``, ``range(n - 1)``; ``items[-keep:]`` -> ``items[-keep + 1:]``, ...).
      An integer literal is moved as a literal (``x[-2:]`` -> ``x[-1:]``, ``x[-3:]``).

``removed-write`` (a store one path forgets)
    - ``branch_assign``: an assignment to a local name (``=``, ``+=``, annotated) in the
      block of one branch of an ``if``/``elif``/``else`` or of a ``try``/``except``/
      ``else`` (its direct statements) is deleted, so the name keeps the value it had
      before the branch. Stores to attributes and subscripts are the ``statement``
      operator's, wherever they are;
    - ``await_result``: the result of an awaited expression assigned or returned is
      ignored: ``x = await f()`` -> ``await f()`` (the call still runs, ``x`` keeps its
      value), ``return await f()`` -> ``await f(); return``.

Each function takes the node the visitor is at and yields its replacements; the
visitor (:class:`mutation.operators.CtxMutationVisitor`) decides where they apply (the
branches' statements, the chains' outermost node).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import libcst as cst

# expressions that `e + 1` / `e - 1` can follow without parentheses
_ADDITIVE_SAFE = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float)
_ADDITIVE_SAFE_OPS = (
    cst.Add,
    cst.Subtract,
    cst.Multiply,
    cst.Divide,
    cst.FloorDivide,
    cst.Modulo,
    cst.Power,
    cst.MatrixMultiply,
)


def _wrapped(node: cst.BaseExpression, outer: cst.BaseExpression) -> cst.BaseExpression:
    """``node`` in place of ``outer``, keeping ``outer``'s own parentheses."""
    lpar, rpar = list(getattr(outer, "lpar", ())), list(getattr(outer, "rpar", ()))
    if not lpar:
        return node
    return node.with_changes(lpar=[*lpar, *node.lpar], rpar=[*node.rpar, *rpar])


# ── wrong-comparison ─────────────────────────────────────────────────────────


def ifexp_branch(node: cst.IfExp) -> Iterator[cst.BaseExpression]:
    if node.body.deep_equals(node.orelse):
        return
    for arm in (node.body, node.orelse):
        yield _wrapped(arm, node)


def _same_chain(node: cst.BaseExpression, op: type[cst.BaseBooleanOp]) -> bool:
    return (
        isinstance(node, cst.BooleanOperation) and isinstance(node.operator, op) and not node.lpar
    )


def boolean_chain(
    node: cst.BooleanOperation,
) -> tuple[list[cst.BaseExpression], list[cst.BaseBooleanOp], list[cst.BooleanOperation]]:
    """The clauses of the ``and``/``or`` chain rooted at ``node``, the operators between
    them, and the chain's inner nodes (which make no mutants of their own)."""
    op = type(node.operator)
    clauses: list[cst.BaseExpression] = []
    ops: list[cst.BaseBooleanOp] = []
    inner: list[cst.BooleanOperation] = []

    def walk(n: cst.BaseExpression) -> None:
        if n is not node and not _same_chain(n, op):
            clauses.append(n)
            return
        assert isinstance(n, cst.BooleanOperation)
        if n is not node:
            inner.append(n)
        walk(n.left)
        ops.append(n.operator)
        walk(n.right)

    walk(node)
    return clauses, ops, inner


def clause(node: cst.BooleanOperation) -> Iterator[cst.BaseExpression]:
    clauses, ops, _inner = boolean_chain(node)
    for i in range(len(clauses)):
        rest = [*clauses[:i], *clauses[i + 1 :]]
        rest_ops = [*ops[: i - 1], *ops[i:]] if i else ops[1:]
        expr = rest[0]
        for op, right in zip(rest_ops, rest[1:], strict=True):
            expr = cst.BooleanOperation(left=expr, operator=op, right=right)
        yield _wrapped(expr, node)


def _moved(value: cst.BaseExpression, delta: int) -> cst.BaseExpression:
    """``value`` moved by ``delta`` (1 or -1); an integer literal stays a literal."""
    literal: int | None = None
    if isinstance(value, cst.Integer) and not value.lpar:
        literal = int(value.evaluated_value)
    elif (
        isinstance(value, cst.UnaryOperation)
        and isinstance(value.operator, cst.Minus)
        and isinstance(value.expression, cst.Integer)
        and not value.lpar
        and not value.expression.lpar
    ):
        literal = -int(value.expression.evaluated_value)
    if literal is not None:
        n = literal + delta
        number = cst.Integer(str(abs(n)))
        return number if n >= 0 else cst.UnaryOperation(operator=cst.Minus(), expression=number)
    safe = isinstance(value, _ADDITIVE_SAFE) or bool(value.lpar)
    if isinstance(value, cst.UnaryOperation) and not value.lpar:
        safe = isinstance(value.operator, cst.Minus | cst.Plus)
    if isinstance(value, cst.BinaryOperation) and not value.lpar:
        safe = isinstance(value.operator, _ADDITIVE_SAFE_OPS)
    left = value if safe else value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    operator = cst.Add() if delta > 0 else cst.Subtract()
    return cst.BinaryOperation(left=left, operator=operator, right=cst.Integer("1"))


def _range_bounds(node: cst.Call) -> Sequence[int]:
    """Indexes of the start/stop arguments of a plain ``range(...)`` call."""
    if not (isinstance(node.func, cst.Name) and node.func.value == "range"):
        return ()
    if not 1 <= len(node.args) <= 3 or any(a.star or a.keyword for a in node.args):
        return ()
    return (0,) if len(node.args) == 1 else (0, 1)


def bound(node: cst.Call | cst.Slice) -> Iterator[cst.CSTNode]:
    if isinstance(node, cst.Call):
        for i in _range_bounds(node):
            arg = node.args[i]
            for delta in (1, -1):
                args = list(node.args)
                args[i] = arg.with_changes(value=_moved(arg.value, delta))
                yield node.with_changes(args=args)
        return
    for field in ("lower", "upper"):
        value = getattr(node, field)
        if value is None:
            continue
        for delta in (1, -1):
            yield node.with_changes(**{field: _moved(value, delta)})


# ── removed-write ────────────────────────────────────────────────────────────


def branch_blocks(node: cst.CSTNode) -> Iterator[cst.BaseSuite]:
    """The blocks of the branches of an ``if`` or ``try`` statement (not ``finally``,
    which every path runs; an ``elif`` is an ``If`` of its own)."""
    if isinstance(node, cst.If):
        yield node.body
        if isinstance(node.orelse, cst.Else):
            yield node.orelse.body
    elif isinstance(node, cst.Try | cst.TryStar):
        yield node.body
        for handler in node.handlers:
            yield handler.body
        if node.orelse is not None:
            yield node.orelse.body


def branch_statements(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The statement lines directly in a branch of ``node`` (see :func:`branch_blocks`)."""
    for block in branch_blocks(node):
        if isinstance(block, cst.SimpleStatementSuite):
            yield block
        elif isinstance(block, cst.IndentedBlock):
            yield from (s for s in block.body if isinstance(s, cst.SimpleStatementLine))


def _local_target(target: cst.BaseExpression) -> bool:
    if isinstance(target, cst.Name):
        return True
    if isinstance(target, cst.Tuple | cst.List):
        return all(_local_target(e.value) for e in target.elements)
    return False


def is_local_assignment(stmt: cst.BaseSmallStatement) -> bool:
    """An assignment whose every target is a local name (``x = ...``, ``a, b = ...``,
    ``x += ...``, ``x: T = ...``); a store to an attribute or subscript is a write of
    the ``statement`` operator's."""
    if isinstance(stmt, cst.Assign):
        return all(_local_target(t.target) for t in stmt.targets)
    if isinstance(stmt, cst.AugAssign):
        return _local_target(stmt.target)
    if isinstance(stmt, cst.AnnAssign):
        return stmt.value is not None and _local_target(stmt.target)
    return False


def _without(
    line: cst.SimpleStatementLine | cst.SimpleStatementSuite, i: int
) -> cst.SimpleStatementLine | cst.SimpleStatementSuite:
    rest: list[cst.BaseSmallStatement] = [*line.body[:i], *line.body[i + 1 :]]
    if not rest:
        rest = [cst.Pass()]
    rest[-1] = rest[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
    return line.with_changes(body=rest)


def branch_assign(
    line: cst.SimpleStatementLine | cst.SimpleStatementSuite,
) -> Iterator[cst.CSTNode]:
    """``line`` without each of its local assignments in turn (``line`` is in a branch)."""
    for i, stmt in enumerate(line.body):
        if is_local_assignment(stmt):
            yield _without(line, i)


def _awaited(stmt: cst.BaseSmallStatement) -> cst.Await | None:
    if isinstance(stmt, cst.Assign | cst.AugAssign | cst.AnnAssign | cst.Return):
        value = stmt.value
        if isinstance(value, cst.Await):
            return value
    return None


def await_result(
    line: cst.SimpleStatementLine | cst.SimpleStatementSuite,
) -> Iterable[cst.CSTNode]:
    for i, stmt in enumerate(line.body):
        value = _awaited(stmt)
        if value is None:
            continue
        semicolon = stmt.semicolon
        call = cst.Expr(value=value.with_changes(lpar=[], rpar=[]), semicolon=semicolon)
        new: list[cst.BaseSmallStatement] = [call]
        if isinstance(stmt, cst.Return):
            new = [
                call.with_changes(
                    semicolon=cst.Semicolon(whitespace_after=cst.SimpleWhitespace(" "))
                ),
                cst.Return(semicolon=semicolon),
            ]
        yield line.with_changes(body=[*line.body[:i], *new, *line.body[i + 1 :]])
