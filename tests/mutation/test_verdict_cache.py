"""The verdict cache: an entry is found again only under exactly the
same key, and each part of the key - the target's files, each part of the ctxaudit suite,
the mutant id, the run profile, the seeds - invalidates it when it changes. If a part were
left out of the key, its case below would find the stale entry and fail."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from mutation import cache, engine

MUTANT = "engine/eval_cap.py:EvalCap.check:wrong-comparison:boundary:0123456789ab"


def verdict(**over: object) -> dict[str, object]:
    """A whole stored verdict (every field of cache.VERDICT_FIELDS)."""
    m = engine.Mutant(MUTANT, "gitreins", "engine/eval_cap.py", "check", "wrong-comparison",
                      "boundary", 1, 1, 1, 2, ">=", ">")  # fmt: skip
    m.status, m.killed_by, m.seeds = "killed", "tests/x.py::test", [0, 1, 2]
    out: dict[str, object] = {k: getattr(m, k) for k in cache.VERDICT_FIELDS}
    out.update(over)
    return out


def layout(tmp_path: Path) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    for part in ("model", "tests", "mutation", "ctxaudit"):
        (repo / part).mkdir(parents=True)
        (repo / part / "a.py").write_text(f"# {part}\n")
    (repo / "mutation" / "targets.toml").write_text("[gitreins]\n")
    (repo / "requirements.lock").write_text("hypothesis==1\n")
    (repo / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    target = tmp_path / "target"
    (target / "engine").mkdir(parents=True)
    (target / "engine" / "eval_cap.py").write_text("def check(): return 1 >= 0\n")
    return repo, target


def the_cache(repo: Path, target: Path, directory: Path, **over: object) -> cache.VerdictCache:
    parts: dict[str, object] = dict(
        target=cache.target_digest(target, "engine"),
        suite=cache.suite_digest(repo),
        profile=cache.run_profile("gated", findings="GR-1"),
        seeds=(0, 1, 2),
    )
    parts.update(over)
    return cache.VerdictCache(directory=directory, **parts)  # type: ignore[arg-type]


def edit(path: Path) -> Callable[[Path, Path], dict[str, object]]:
    def change(repo: Path, target: Path) -> dict[str, object]:
        base = target if path.parts[0] == "engine" else repo
        f = base / path
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text((f.read_text() if f.exists() else "") + "# changed\n")
        return {}

    return change


CHANGES: dict[str, Callable[[Path, Path], dict[str, object]]] = {
    "target file": edit(Path("engine/eval_cap.py")),
    "new target file": edit(Path("engine/new.py")),
    "model/": edit(Path("model/a.py")),
    "tests/": edit(Path("tests/a.py")),
    "mutation/": edit(Path("mutation/targets.toml")),
    "ctxaudit/": edit(Path("ctxaudit/a.py")),
    "lock file": edit(Path("requirements.lock")),
    "pytest settings": edit(Path("pyproject.toml")),
    "recheck mode": lambda r, t: {"profile": cache.run_profile("all", findings="GR-1")},
    "findings left out": lambda r, t: {"profile": cache.run_profile("gated", findings="none")},
    "part of the suite": lambda r, t: {
        "profile": cache.run_profile("gated", findings="GR-1", tests=("tests/a.py",))
    },
    "seeds": lambda r, t: {"seeds": (3, 4, 5)},
    "fewer seeds": lambda r, t: {"seeds": (0,)},
}


@pytest.mark.parametrize("change", CHANGES)
def test_each_key_part_invalidates_the_entry(tmp_path: Path, change: str) -> None:
    repo, target = layout(tmp_path)
    store = tmp_path / "cache"
    stored = verdict()
    the_cache(repo, target, store).put(MUTANT, stored)
    assert the_cache(repo, target, store).get(MUTANT) == stored  # same key: reused
    over = CHANGES[change](repo, target)
    assert the_cache(repo, target, store, **over).get(MUTANT) is None, change


def test_mutant_id_is_part_of_the_key(tmp_path: Path) -> None:
    repo, target = layout(tmp_path)
    c = the_cache(repo, target, tmp_path / "cache")
    c.put(MUTANT, verdict())
    assert c.get(MUTANT.replace("0123", "9999")) is None
    assert c.get(MUTANT) == verdict()


def test_bytecode_and_work_copies_do_not_invalidate(tmp_path: Path) -> None:
    repo, target = layout(tmp_path)
    before = (cache.suite_digest(repo), cache.target_digest(target, "engine"))
    (repo / "tests" / "__pycache__").mkdir()
    (repo / "tests" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"x")
    (repo / "mutation" / "work" / "run.1").mkdir(parents=True)
    (repo / "mutation" / "work" / "run.1" / "plan.json").write_text("{}")
    (target / "engine" / "__pycache__").mkdir()
    (target / "engine" / "__pycache__" / "eval_cap.cpython-311.pyc").write_bytes(b"x")
    assert (cache.suite_digest(repo), cache.target_digest(target, "engine")) == before


def test_fill_restores_a_mutants_verdict(tmp_path: Path) -> None:
    repo, target = layout(tmp_path)
    c = the_cache(repo, target, tmp_path / "cache")

    def mutant(mid: str) -> engine.Mutant:
        return engine.Mutant(mid, "gitreins", "engine/eval_cap.py", "check", "wrong-comparison",
                             "boundary", 1, 1, 1, 2, ">=", ">")  # fmt: skip

    ran = mutant(MUTANT)
    ran.status, ran.killed_by, ran.robust, ran.seeds = "killed", "t::x", "robust", [0, 1, 2]
    ran.seed_checks = [{"seed": 1, "status": "killed"}]
    pending = mutant(MUTANT + "x")
    assert c.store([ran, pending]) == 1  # a mutant without a verdict is not stored
    again, other = mutant(MUTANT), mutant(MUTANT + "x")
    assert c.fill([again, other]) == [again]
    assert (again.status, again.killed_by, again.robust, again.seed_checks) == (
        "killed", "t::x", "robust", [{"seed": 1, "status": "killed"}],
    )  # fmt: skip
    assert other.status == "pending"


def test_a_mutant_without_a_verdict_is_never_stored(tmp_path: Path) -> None:
    """An error in any pass (a run that died by a signal not ctxaudit's) is no verdict."""
    repo, target = layout(tmp_path)
    c = the_cache(repo, target, tmp_path / "cache")

    def mutant(mid: str) -> engine.Mutant:
        return engine.Mutant(mid, "gitreins", "engine/eval_cap.py", "check", "wrong-comparison",
                             "boundary", 1, 1, 1, 2, ">=", ">")  # fmt: skip

    first, second, seed = mutant("a"), mutant("b"), mutant("c")
    first.status = "error"
    second.status, second.second_status = "killed", "error"
    seed.status, seed.seed_checks = "killed", [{"seed": 1, "status": "error", "killed_by": None,
                                                "seed_free": None, "seconds": 1.0}]  # fmt: skip
    assert c.store([first, second, seed]) == 0
    assert not list((tmp_path / "cache").rglob("*.json"))
    with pytest.raises(cache.InvalidEntry):
        c.put("a", verdict(status="error"))
