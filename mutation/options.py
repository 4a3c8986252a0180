"""The options of a mutation run (:func:`mutation.run`) as one value.

Plain data with no dependencies, so a caller can build it before the engine is loaded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

#: what ``recheck`` may be: which mutants run a second time (``--recheck``)
RECHECK_MODES = ("gated", "survivors", "all", "none")


@dataclass(frozen=True)
class RunOptions:
    """How to run: everything :func:`mutation.run` takes besides the target, its spec and
    the report folder. The defaults are ``python -m mutation run``'s."""

    #: ``(i, n)``: run only the i-th of n deterministic shards and write
    #: ``mutation-shard-i-of-n.json``; :func:`mutation.merge` makes the report
    shard: tuple[int, int] | None = None
    #: receives the runner's events as dicts (``plan``, ``cache``, ``baseline``,
    #: ``result``, ``done``; a peer's carry ``"suite": "peer"``)
    progress: Callable[[dict[str, Any]], None] | None = None
    #: mutants run at a time (forks)
    jobs: int = 2
    #: which mutants run a second time to find flaky verdicts (:data:`RECHECK_MODES`)
    recheck: str = "gated"
    #: measure the branch coverage of the scope (the first shard only)
    coverage: bool = True
    #: the fraction of ``other`` mutants run (chosen by a hash of their id, so the same
    #: ones every time); the gated kinds and the catalogue always run in full
    other_sample: float = 1.0
    #: also run the same mutants against the target's own tests (never gated)
    peer: bool = False
    #: run only the mutants whose id matches one of these globs
    only: Sequence[str] = ()
    #: pass 1 runs under the first; each detected gated mutant whose killer uses
    #: Hypothesis runs again under the others (0: the profile's derandomized examples)
    seeds: Sequence[int] = (0, 1, 2)
    #: reuse verdicts stored under ``.cache/mutation-verdicts/`` and store the new ones
    cache: bool = True
    #: mutate a copy of the tree with these fixes applied (``["all"]``: every fix for
    #: the version)
    fixes: Sequence[str] = ()
    #: run only this part of the target's suite (test files or node ids inside its
    #: configured tests)
    tests: Sequence[str] = ()
