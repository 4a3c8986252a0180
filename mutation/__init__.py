"""Mutation audit of the ctxaudit targets. See mutation/README.md.

The public API (what ``ctxaudit audit`` and ``python -m mutation`` use)::

    from mutation import run, merge, RunOptions
    result = run("gitreins", "0.17.1", Path("reports/gitreins-0.17.1"))
    result.gate_passed, result.counts, result.elapsed, result.mutants_per_second

    # on N machines, then once:
    run("ledger", "", out, RunOptions(shard=(1, 3))) ... RunOptions(shard=(3, 3))
    merge([out]) -> MutationResult (writes mutation.json / mutation.md, decides the gate)

The names are loaded on first use from :mod:`mutation.orchestrate`, so that
``mutation.worker`` can run in a target's own environment (a lightspeed-stack
tree's Python 3.12), which has none of the engine's dependencies (libcst).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mutation.orchestrate import (
        MutationError,
        MutationResult,
        RunOptions,
        _matches,  # noqa: F401 - for tests
        merge,
        resolve_target,
        result_as_dict,
        run,
    )

__all__ = [
    "MutationError",
    "MutationResult",
    "RunOptions",
    "merge",
    "resolve_target",
    "result_as_dict",
    "run",
]
_LAZY = {*__all__, "_matches"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module("mutation.orchestrate"), name)
    raise AttributeError(f"module 'mutation' has no attribute {name!r}")
