"""Hypothesis seeds in the mutation worker (see ``mutation/worker.py``, pass 3).

Seed 0 is the profile's own derandomized examples; any other seed ``s`` gives every
Hypothesis test the random source ``sha256(s, the test's digest)`` instead, so a
verdict under ``s`` replays with the same seed. The hook that does it is
``ctxaudit/seeding.py``'s, shared with every other suite run; what is here is the
worker's: which mutants a pass runs again, and in what order a mutant's tests run.
"""

from __future__ import annotations

from typing import Any

from ctxaudit.seeding import CONSULTED as CONSULTED
from ctxaudit.seeding import SEED as SEED
from ctxaudit.seeding import install_seed_hook as install_seed_hook
from ctxaudit.seeding import seeded_random as seeded_random


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
