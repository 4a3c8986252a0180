"""Conditional function exclusions (``[[<target>.exclude]] when = REGEX``): a function is
left out only where its source matches, so one scope reads right for versions that keep
different code under the same name (gitreins' ``AgenticEvaluator.evaluate``: the LLM loop
before 0.15.0, a reap wrapper around ``_evaluate_loop`` from 0.15.0 on)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from mutation import engine
from mutation.config import ConfigError, load_targets, target_config

TOY = """
[toy]
package = "pkg"
tests = ["tests"]

[[toy.files]]
path = "pkg/*.py"
functions = ["run", "_loop"]

[[toy.exclude]]
function = "run"
when = 'return _loop\\('
reason = "a wrapper around _loop"

[[toy.exclude_statements]]
function = ["_loop", "run"]
statement = '^label = '
reason = "display text"
"""

# the loop in a function of its own, run only a wrapper around it ...
WRAPPED = """
def run(n):
    try:
        return _loop(n)
    finally:
        DONE.append(n)


def _loop(n):
    label = "x" if n > 1 else "y"
    return n > 0
"""

# ... and the same loop inside run itself
INLINE = """
def run(n):
    label = "x" if n > 1 else "y"
    return n > 0
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "targets.toml"
    path.write_text(text)
    return path


def toy_plan(tmp_path: Path, source: str) -> engine.Plan:
    cfg = load_targets(_write(tmp_path, TOY))["toy"]
    (tmp_path / "catalogue.toml").write_text("")
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "m.py").write_text(source)
    return engine.build_plan("toy", cfg, tmp_path / "src", "1", tmp_path / "catalogue.toml")


def test_excluded_only_where_the_source_matches(tmp_path: Path) -> None:
    cfg = load_targets(_write(tmp_path, TOY))["toy"]
    wrapper = "def run(n):\n    return _loop(n)\n"
    inline = "def run(n):\n    return n > 0\n"
    exclusion = cfg.excluded_function("run", wrapper)
    assert exclusion is not None and exclusion.reason == "a wrapper around _loop"
    assert not cfg.in_scope("pkg/m.py", "run", wrapper)
    assert cfg.excluded_function("run", inline) is None
    assert cfg.in_scope("pkg/m.py", "run", inline)
    # a caller without the source (--since's changed functions) keeps it in scope
    assert cfg.in_scope("pkg/m.py", "run")
    assert cfg.in_scope("pkg/m.py", "_loop", wrapper)


def test_plan_follows_the_source(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    wrapped = toy_plan(tmp_path / "a", WRAPPED)
    inline = toy_plan(tmp_path / "b", INLINE)
    assert {m.function for m in wrapped.mutants} == {"_loop"}
    assert {m.function for m in inline.mutants} == {"run"}
    # the statement exclusion applies to the loop under either name
    for plan in (wrapped, inline):
        assert set(plan.excluded) == {"display text"} and plan.excluded["display text"] > 0
        assert plan.mutants and all("label" not in m.original for m in plan.mutants)


def test_bad_when_or_function_list_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        load_targets(_write(tmp_path, TOY.replace("return _loop\\(", "(")))
    with pytest.raises(ConfigError):
        load_targets(_write(tmp_path, TOY.replace('function = ["_loop", "run"]', "function = []")))


def _gitreins_plan(version: str) -> engine.Plan:
    from ctxaudit.targets.gitreins import tree as gitreins

    if version != gitreins.PINNED and not (gitreins.CACHE / version / "engine").is_dir():
        pytest.skip(f"gitreins {version} is not in {gitreins.CACHE}")
    tree = gitreins.resolve(version)
    cfg = target_config("gitreins")
    one_file = tuple(f for f in cfg.files if f[0] == "engine/evaluator.py")
    return engine.build_plan("gitreins", replace(cfg, files=one_file), tree.root, tree.version)


def test_gitreins_loop_is_in_scope_on_every_version() -> None:
    """0.13.0 holds the loop in evaluate (mutated); from 0.15.0 evaluate is the reap
    wrapper (left out) and the loop is _evaluate_loop (mutated)."""
    old = _gitreins_plan("0.13.0")
    new = _gitreins_plan("0.17.1")
    old_kinds = {m.kind for m in old.mutants if m.function == "AgenticEvaluator.evaluate"}
    assert {"removed-write", "wrong-comparison"} <= old_kinds
    assert not any(m.function == "AgenticEvaluator._evaluate_loop" for m in old.mutants)
    assert not any(m.function == "AgenticEvaluator.evaluate" for m in new.mutants)
    assert any(m.function == "AgenticEvaluator._evaluate_loop" for m in new.mutants)
    # the loop's statement exclusions apply under both names
    for plan in (old, new):
        assert any(r.startswith("building the first task prompt") for r in plan.excluded)


SHARED_OPERATOR = """
def _loop(n):
    label = "x" if n is not None else "y"
    return n is not None
"""


def test_an_exclusion_does_not_renumber_the_mutants_after_it(tmp_path: Path) -> None:
    """A mutant's id counts the same change before it in its function, those in a
    statement left out included: excluding one never renames the reviewed ids after it."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    excluded = toy_plan(tmp_path / "a", SHARED_OPERATOR)
    kept = toy_plan(tmp_path / "b", SHARED_OPERATOR.replace("label = ", "tag = "))
    after = {m.id for m in kept.mutants if m.line == 4}
    assert after and after <= {m.id for m in excluded.mutants}
