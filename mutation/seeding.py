"""Hypothesis seeds in the mutation worker (see ``mutation/worker.py``, pass 3).

Seed 0 is the profile's own derandomized examples; any other seed ``s`` gives every
Hypothesis test the random source ``sha256(s, the test's digest)`` instead, so a
verdict under ``s`` replays with the same seed.
"""

from __future__ import annotations

from typing import Any

#: the seed of this process (0: the profile's derandomized examples); set in a child
SEED = [0]
#: whether the running test asked Hypothesis for its random source
CONSULTED = [False]


def install_seed_hook() -> None:
    """Route Hypothesis' choice of random source through :func:`seeded_random`.

    ``hypothesis.core.get_random_for_wrapped_test`` is looked up at each call of a
    ``@given`` test (stateful machines included), so replacing the module attribute is
    enough. The hook also notes that the test used Hypothesis at all.
    """
    import hypothesis.core

    hcore: Any = hypothesis.core  # its internals are neither typed nor exported
    if getattr(hcore.get_random_for_wrapped_test, "_ctxaudit", False):
        return
    original = hcore.get_random_for_wrapped_test

    def hooked(test: Any, wrapped_test: Any) -> Any:
        if getattr(wrapped_test, "_hypothesis_internal_use_seed", None) is not None:
            # an explicit @seed(...): the test's examples are fixed, whatever our seed
            return original(test, wrapped_test)
        CONSULTED[0] = True
        if SEED[0] == 0:
            return original(test, wrapped_test)
        wrapped_test._hypothesis_internal_use_generated_seed = None
        return seeded_random(SEED[0], hcore.function_digest(test))

    hooked._ctxaudit = True  # type: ignore[attr-defined]  # marks the hook installed
    hcore.get_random_for_wrapped_test = hooked


def seeded_random(seed: int, digest: bytes) -> Any:
    import hashlib
    from random import Random

    h = hashlib.sha256(f"ctxaudit-seed:{seed}:".encode() + digest).digest()
    return Random(int.from_bytes(h[:16], "big"))


def to_recheck(plan: dict[str, Any], first: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The mutants pass 2 runs again (the plan's ``recheck``): all, or the survivors
    and timeouts (of the gated kinds only, for ``gated``), or none."""
    mutants = plan["mutants"]
    recheck = plan.get("recheck", "survivors")
    if recheck == "all":
        return list(mutants)
    if recheck in ("survivors", "gated"):
        return [
            mu
            for mu in mutants
            if first[mu["id"]]["status"] in ("survived", "timeout")
            and (recheck == "survivors" or mu.get("gated"))
        ]
    return []


def seed_order(
    ordered: list[Any],
    seed_free: set[str],
    base_tests: dict[str, Any],
    passed_first: set[str],
    killer: str | None,
) -> list[Any]:
    """A mutant's tests in pass 3 (``ordered``: those that reach it): the seed-free ones
    first (less those that passed in pass 1, ``passed_first``: they pass under any
    seed), then its pass-1 killer, then the rest; by the baseline's duration within."""

    def rank(it: Any) -> int:
        if it.nodeid in seed_free:
            return 0
        return 1 if it.nodeid == killer else 2

    chosen = [it for it in ordered if not (it.nodeid in seed_free and it.nodeid in passed_first)]
    return sorted(chosen, key=lambda it: (rank(it), base_tests[it.nodeid]["duration"], it.nodeid))
