"""Hypothesis seeds under a derandomized profile (``ci``, ``mutation``, ``smoke``).

A derandomized profile draws each test's examples from the test's own digest, and
Hypothesis ignores ``--hypothesis-seed`` there (``get_random_for_wrapped_test`` looks at
``derandomize`` before the global seed). So a seed must be routed here to mean anything:
seed 0 is the profile's own derandomized examples; any other seed ``s`` gives every
Hypothesis test the random source ``sha256(s, the test's digest)`` instead, so a verdict
under ``s`` replays with the same seed. The mutation worker sets the seed per child
(``mutation/forking.py``); every other run takes it from ``--hypothesis-seed``
(``ctxaudit/pytest_plugin.py``).
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
