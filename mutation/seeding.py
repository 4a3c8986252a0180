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
    import hypothesis.core as hcore

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

    hooked._ctxaudit = True  # type: ignore[attr-defined]
    hcore.get_random_for_wrapped_test = hooked


def seeded_random(seed: int, digest: bytes) -> Any:
    import hashlib
    from random import Random

    h = hashlib.sha256(f"ctxaudit-seed:{seed}:".encode() + digest).digest()
    return Random(int.from_bytes(h[:16], "big"))
