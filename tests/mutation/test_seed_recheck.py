"""The seed recheck (pass 3) on a toy target: a kill that depends on Hypothesis' seed is
reported as seed-dependent and fails the gate; kills by a test that does not use the seed,
or under every seed, are robust. A fixture of the check."""

from __future__ import annotations

import textwrap
from pathlib import Path

from mutation import driver, engine, report
from mutation.config import TargetConfig

#: seconds beyond the tests' own time before a mutant's child is a timeout: far
#: above a toy test's milliseconds on a loaded machine, so only a mutant that never
#: ends times out
TIMEOUT_CONSTANT = 8.0

TOY = """
def over(n):
    return n >= 7


def twice(n):
    return n * 2 if n >= 0 else -1


def half(n):
    return n // 2 if n >= 0 else 0
"""

# test_over draws 4 of the 10 values 0..9: the boundary mutant (>= 7 -> > 7) differs
# only at 7, so whether it is killed depends on the seed; the sense reversal
# (>= 7 -> <= 7) differs at every value but 7, so every seed kills it. test_twice
# does not use Hypothesis at all; test_half fixes its examples with @seed, so its verdict
# does not depend on the run's seed either.
TESTS = """
from hypothesis import Phase, given, seed, settings, strategies as st

from toyseed.meter import half, over, twice


@settings(max_examples=4, database=None, derandomize=True, phases=[Phase.generate])
@given(st.integers(0, 9))
def test_over(n):
    assert over(n) == (n >= 7)


def test_twice():
    assert twice(3) == 6
    assert twice(0) == 0


@seed(5)
@settings(max_examples=3, database=None, phases=[Phase.generate])
@given(st.integers(-5, -1))
def test_half(n):
    assert half(n) == 0
"""

# found once by trying seeds 0..7 (stable: the draws are a function of the seed and
# the test's digest): seeds 1, 2 and 6 draw 7, seeds 0, 3, 4, 5 and 7 do not. So the
# boundary mutant is killed in pass 1 (seed 1) and in the recheck under seed 2, and
# survives under seed 3: it takes all three seeds to see that the kill is luck.
SEEDS = [1, 2, 3]


def test_seed_dependent_kill_fails_the_gate(tmp_path: Path) -> None:
    root = tmp_path / "src"
    (root / "toyseed").mkdir(parents=True)
    (root / "toyseed" / "__init__.py").write_text("")
    (root / "toyseed" / "meter.py").write_text(textwrap.dedent(TOY))
    tests = tmp_path / "toytests"
    tests.mkdir()
    (tests / "test_toyseed.py").write_text(TESTS)
    (tmp_path / "none.toml").write_text("")
    cfg = TargetConfig(
        name="toy",
        package="toyseed",
        tests=(str(tests),),
        pytest_args=("-p", "no:hypothesispytest"),
        files=(("toyseed/*.py", ("*",)),),
    )
    plan = engine.build_plan("toy", cfg, root, "0", catalogue_path=tmp_path / "none.toml")
    by_key = {(m.function, m.original, m.replacement): m for m in plan.mutants}
    boundary = by_key[("over", ">= 7", "> 7")]
    reversal = by_key[("over", ">= 7", "<= 7")]
    plain = by_key[("twice", ">= 0", "> 0")]
    fixed = by_key[("half", ">= 0", "<= 0")]
    wanted = [boundary, reversal, plain, fixed]
    work = tmp_path / "work"
    modules = engine.write_work_tree(plan, {m.id for m in wanted}, work, "toyseed")
    settings = driver.WorkerSettings(
        modules=modules, jobs=2, recheck="gated", timeout_constant=TIMEOUT_CONSTANT, seeds=SEEDS
    )
    driver.run_worker(plan, cfg, wanted, work, settings)
    assert [m.status for m in wanted] == ["killed"] * 4, [(m.id, m.status) for m in wanted]
    assert boundary.robust == "seed-dependent", boundary.robust_reason
    assert [(c["seed"], c["status"]) for c in boundary.seed_checks] == [
        (2, "killed"),
        (3, "survived"),
    ]
    assert boundary.robust_reason.endswith("survived under seed 3")
    assert reversal.robust == "robust" and "every seed" in reversal.robust_reason
    assert reversal.robust_by == "every seed"
    assert plain.robust == "robust" and plain.seed_free and not plain.seed_checks
    assert plain.robust_by == "seed-free test"
    assert fixed.robust_by == "seed-free test" and fixed.seed_free and not fixed.seed_checks

    doc = {
        "target": "toy",
        "version": "0",
        "seeds": SEEDS,
        "mutants": [engine.mutant_to_json(m) for m in wanted],
    }
    gate = report.apply_gate(doc, {})["gate"]
    assert not gate["passed"] and gate["failures"] == [boundary.id]
    assert report.robustness(doc["mutants"]) == {
        "wrong-comparison": {
            "robust": 3,
            "seed-dependent": 1,
            "unchecked": 0,
            "robust_by_seed_free_test": 2,
        }
    }
    # the same kills with one seed: unchecked, and the gate passes as before
    one = {**doc, "seeds": [1]}
    for m in one["mutants"]:
        m["robust"] = None
    assert report.apply_gate(one, {})["gate"]["passed"]
