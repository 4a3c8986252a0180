"""The operators beyond one token (``mutation/operators_beyond.py``) on known snippets:
exactly the expected mutants with their kinds, and not one id of the operators before
them renamed (on toys and on the ledger's and gitreins 0.17.1's scopes)."""

from __future__ import annotations

import functools
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from mutation import engine
from mutation.config import target_config
from mutation.operators import (
    BEYOND_REMOVED_WRITE,
    BEYOND_WRONG_COMPARISON,
    GATED_KINDS,
    REMOVED_WRITE,
    WRONG_COMPARISON,
    OperatorSettings,
    create_mutations,
)

NEW = (*BEYOND_WRONG_COMPARISON, *BEYOND_REMOVED_WRITE)


def made(src: str, operator: str) -> list[tuple[str, str, str]]:
    """(kind, original, mutated) of each mutant ``operator`` makes in ``src``."""
    module, muts = create_mutations(textwrap.dedent(src), "x.py")
    return [
        (
            mu.kind,
            " ".join(module.code_for_node(mu.original_node).split()),
            " ".join(module.code_for_node(mu.mutated_node).split()),
        )
        for mu in muts
        if mu.operator == operator
    ]


def compiles(src: str) -> None:
    """Every new mutant, put in place in ``src``, is still Python."""
    from mutmut.mutation.file_mutation import deep_replace

    module, muts = create_mutations(textwrap.dedent(src), "x.py")
    for mu in muts:
        if mu.operator in NEW:
            mutated = deep_replace(module, mu.original_node, mu.mutated_node)
            assert isinstance(mutated, cst.Module)
            compile(mutated.code, "x.py", "exec")


def test_the_new_operators_are_gated_kinds() -> None:
    assert {WRONG_COMPARISON, REMOVED_WRITE} <= set(GATED_KINDS)


def test_a_conditional_expression_is_replaced_by_either_branch() -> None:
    src = """
        def f(c, a, b, n):
            x = a if c else b
            y = (a if c else b) + 1
            z = n if c else n
    """
    assert made(src, "ifexp_branch") == [
        (WRONG_COMPARISON, "a if c else b", "a"),
        (WRONG_COMPARISON, "a if c else b", "b"),
        # its parentheses stay: (a) + 1, never a lost grouping
        (WRONG_COMPARISON, "(a if c else b)", "(a)"),
        (WRONG_COMPARISON, "(a if c else b)", "(b)"),
        # both branches the same: nothing to tell apart, no mutant
    ]
    compiles(src)


def test_one_clause_of_a_chain_is_dropped() -> None:
    src = """
        def f(a, b, c, d):
            if a and b and c or d:
                return (a or b) and not c
    """
    assert made(src, "clause") == [
        # the `or` chain: [a and b and c, d]
        (WRONG_COMPARISON, "a and b and c or d", "d"),
        (WRONG_COMPARISON, "a and b and c or d", "a and b and c"),
        # the `and` chain inside it drops one clause at a time, never two
        (WRONG_COMPARISON, "a and b and c", "b and c"),
        (WRONG_COMPARISON, "a and b and c", "a and c"),
        (WRONG_COMPARISON, "a and b and c", "a and b"),
        # a parenthesised clause is a chain of its own
        (WRONG_COMPARISON, "(a or b) and not c", "not c"),
        (WRONG_COMPARISON, "(a or b) and not c", "(a or b)"),
        (WRONG_COMPARISON, "(a or b)", "(b)"),
        (WRONG_COMPARISON, "(a or b)", "(a)"),
    ]
    compiles(src)


def test_a_range_or_slice_bound_moves_by_one() -> None:
    src = """
        def f(items, keep, n):
            for i in range(len(items) - 1, -1, -1):
                pass
            for j in range(n):
                pass
            tail = items[-keep:]
            window = items[2:n:2]
            first = items[0]
    """
    assert made(src, "bound") == [
        (WRONG_COMPARISON, "range(len(items) - 1, -1, -1)", "range(len(items) - 1 + 1, -1, -1)"),
        (WRONG_COMPARISON, "range(len(items) - 1, -1, -1)", "range(len(items) - 1 - 1, -1, -1)"),
        # a literal moves as a literal; the step is not a bound
        (WRONG_COMPARISON, "range(len(items) - 1, -1, -1)", "range(len(items) - 1, 0, -1)"),
        (WRONG_COMPARISON, "range(len(items) - 1, -1, -1)", "range(len(items) - 1, -2, -1)"),
        (WRONG_COMPARISON, "range(n)", "range(n + 1)"),
        (WRONG_COMPARISON, "range(n)", "range(n - 1)"),
        (WRONG_COMPARISON, "-keep:", "-keep + 1:"),
        (WRONG_COMPARISON, "-keep:", "-keep - 1:"),
        (WRONG_COMPARISON, "2:n:2", "3:n:2"),
        (WRONG_COMPARISON, "2:n:2", "1:n:2"),
        (WRONG_COMPARISON, "2:n:2", "2:n + 1:2"),
        (WRONG_COMPARISON, "2:n:2", "2:n - 1:2"),
        # an index is not a bound
    ]
    compiles(src)


def test_a_bound_that_binds_looser_than_plus_is_parenthesised() -> None:
    src = """
        def f(items, a, b, c):
            return items[: a if c else b], items[: a << b]
    """
    got = [new for _k, _old, new in made(src, "bound")]
    assert got == [
        ": (a if c else b) + 1",
        ": (a if c else b) - 1",
        ": (a << b) + 1",
        ": (a << b) - 1",
    ]
    compiles(src)


def test_an_assignment_in_one_branch_is_removed() -> None:
    src = """
        def f(self, c, d):
            result = None
            if c:
                result = 1
                self.seen = True
            elif d:
                total += 1; other = 2
            else:
                a, b = 1, 2
            try:
                value: int = self.load()
            except KeyError:
                value = 0
            finally:
                done = True
            for x in d:
                skipped = x
            if d: short = 3
    """
    assert made(src, "branch_assign") == [
        (REMOVED_WRITE, "result = 1", "pass"),
        (REMOVED_WRITE, "total += 1; other = 2", "other = 2"),
        (REMOVED_WRITE, "total += 1; other = 2", "total += 1"),
        (REMOVED_WRITE, "a, b = 1, 2", "pass"),
        (REMOVED_WRITE, "value: int = self.load()", "pass"),
        (REMOVED_WRITE, "value = 0", "pass"),
        (REMOVED_WRITE, "short = 3", "pass"),
    ]
    # the attribute store is the statement operator's; `finally` and a loop's body
    # are not one branch of an if/try; the first line is outside every branch
    compiles(src)


def test_an_awaited_result_is_ignored_and_its_call_kept() -> None:
    src = """
        async def f(self, store, x):
            items = await store.load(x)
            self.last: list = await store.fetch()
            count += await store.count(); tail = 1
            await store.save(items)
            unawaited = store.peek()
            return await store.done(items)
    """
    assert made(src, "await_result") == [
        (REMOVED_WRITE, "items = await store.load(x)", "await store.load(x)"),
        (REMOVED_WRITE, "self.last: list = await store.fetch()", "await store.fetch()"),
        (REMOVED_WRITE, "count += await store.count(); tail = 1", "await store.count(); tail = 1"),
        (REMOVED_WRITE, "return await store.done(items)", "await store.done(items); return"),
    ]
    compiles(src)


def test_the_operators_before_these_make_the_same_mutants() -> None:
    """With the new operators on, every mutant of the others is made as before, in the
    same order: their ids, which count identical changes in order, cannot move."""
    src = textwrap.dedent(
        """
        async def f(self, items, keep, c):
            x = items[-keep:] if c and keep > 0 else items
            if c:
                total = await self.load(x)
                self.n += 1
            return x
        """
    )

    def shape(settings: OperatorSettings) -> list[tuple[str, str, tuple[int, int]]]:
        module, muts = create_mutations(src, "x.py", settings)
        return [
            (mu.operator, module.code_for_node(mu.mutated_node), mu.start)
            for mu in muts
            if mu.operator not in NEW
        ]

    before = shape(OperatorSettings(beyond_one_line=False))
    assert before and shape(OperatorSettings()) == before
    _module, all_of_them = create_mutations(src, "x.py")
    assert {mu.operator for mu in all_of_them} >= set(NEW) - {"branch_assign"}


def _plan_ids(
    target: str, spec: str | None, beyond: bool, monkeypatch: pytest.MonkeyPatch
) -> engine.Plan:
    from mutation import resolve

    found = resolve.resolve(target, spec)
    settings = functools.partial(OperatorSettings, beyond_one_line=beyond)
    with monkeypatch.context() as patch:
        patch.setattr(engine, "OperatorSettings", settings)
        plan = engine.build_plan(
            target, target_config(target), found.root, found.version, Path("/dev/null")
        )
    return plan


# the ledger's scope in the suite; gitreins 0.17.1's (8 s more) was checked the same way
# when the operators were added (2,091 ids, in order)
@pytest.mark.parametrize(("target", "spec"), [("ledger", None)])
def test_no_existing_id_moves_on_a_real_scope(
    target: str, spec: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scope's plan with the new operators holds every id of the plan without them,
    unchanged and in the same order, and adds mutants of the new operators only."""
    before = _plan_ids(target, spec, False, monkeypatch)
    after = _plan_ids(target, spec, True, monkeypatch)
    kept = [m.id for m in after.mutants if m.operator not in NEW]
    assert kept == [m.id for m in before.mutants]
    added = [m for m in after.mutants if m.operator in NEW]
    assert added and all(m.kind in GATED_KINDS for m in added)
    assert before.excluded.keys() == after.excluded.keys()
