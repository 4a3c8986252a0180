"""The ctxaudit operators on known snippets: exactly the expected mutants, with their kinds."""

from __future__ import annotations

import textwrap

from mutation.operators import (
    OTHER,
    REMOVED_WRITE,
    WRONG_COMPARISON,
    create_mutations,
    name_tokens,
)


def mutants(src: str) -> list[tuple[str, str, str, str]]:
    module, muts = create_mutations(textwrap.dedent(src), "x.py")
    return [
        (
            mu.kind,
            mu.operator,
            module.code_for_node(mu.original_node).strip(),
            module.code_for_node(mu.mutated_node).strip(),
        )
        for mu in muts
    ]


def of(kind: str, src: str) -> list[tuple[str, str, str]]:
    return [(op, a, b) for k, op, a, b in mutants(src) if k == kind]


def test_removed_write_statements():
    src = """
        def f(self, d, k, x):
            self.n += 1
            d[k] = x
            self.a: int = 2
            store(x)
            y = 3
            local += 1
            logger.info("hello %s", x)
            return y
    """
    assert of(REMOVED_WRITE, src) == [
        ("statement", "self.n += 1", "pass"),
        ("statement", "d[k] = x", "pass"),
        ("statement", "self.a: int = 2", "pass"),
        ("statement", "store(x)", "pass"),
    ]


def test_removed_write_keeps_other_statements_of_the_line():
    assert of(REMOVED_WRITE, "def f(a):\n    a.x = 1; b = 2\n") == [
        ("statement", "a.x = 1; b = 2", "b = 2")
    ]


def test_quiet_calls_are_not_mutated_inside():
    assert mutants('def f(x):\n    logger.warning("cap %d", x + 1)\n') == []


def test_a_cast_type_alone_is_not_mutated():
    """``cast`` returns its value at run time: only the mutants of the value remain."""
    got = [b for _, _, _, b in mutants("def f(x):\n    return cast(str, x.y)\n")]
    assert got == ["cast(str, None)", "cast(x.y)", "cast(str, )"]


def test_comparison_kinds():
    got = of(WRONG_COMPARISON, "def f(a, b):\n    return a > b\n")
    assert ("boundary", "> b", ">= b") in got
    assert ("sense", "> b", "< b") in got
    assert of(WRONG_COMPARISON, "def f(a, b):\n    return a == b\n") == [
        ("equality", "== b", "!= b")
    ]
    assert [op for op, *_ in of(WRONG_COMPARISON, "def f(a, b):\n    return a is None\n")] == [
        "identity"
    ]
    # arithmetic swaps stay "other"
    assert all(k == OTHER for k, op, *_ in mutants("def f(a, b):\n    return a + b\n"))


def test_operand_replacement_finds_gr_gap_062():
    src = """
        def loop(self, caps):
            cumulative_prompt_tok = 0
            iteration = 0
            while iteration < 10:
                budget_used = self.eval_cap.cumulative_input_tokens
                if budget_used > 0:
                    threshold = int(self.eval_cap.max_input_tokens * 0.9)
                    if budget_used > threshold:
                        cumulative_prompt_tok = 0
                prompt_tok = caps.prompt_tokens
                cumulative_prompt_tok = max(cumulative_prompt_tok, prompt_tok)
                iteration += 1
    """
    got = [(a, b) for op, a, b in of(WRONG_COMPARISON, src) if op == "operand"]
    assert ("budget_used > threshold", "cumulative_prompt_tok > threshold") in got
    # never the other operand of the same comparison, never a name of another kind
    assert ("budget_used > threshold", "threshold > threshold") not in got
    assert all("iteration" not in b for a, b in got if "budget_used" in a)


def test_operand_replacement_needs_same_kind():
    src = """
        def f(self, name: str, n: int):
            count = 0
            label = "x"
            if n > count:
                return name == label
    """
    got = [(a, b) for op, a, b in of(WRONG_COMPARISON, src) if op == "operand"]
    assert got == []  # n/count share no name token; name/label neither


def test_name_tokens():
    assert name_tokens("cumulative_prompt_tok") == {"cumulative", "prompt", "token"}
    assert name_tokens("maxInputTokens") == {"max", "input", "token"}


def test_generation_is_deterministic():
    src = "def f(self, a, b):\n    self.x = a\n    return a > b and b < 3\n"
    assert mutants(src) == mutants(src)
