"""The step cache's keys: what a step read (the target version's code, ctxaudit's
suite, the step's options, the Python and test libraries it runs under and the variables
that decide what it imports: ``ctxaudit/environment.py``), hashed. Any part that changes
gives another key, so a stale entry is never read."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ctxaudit import targets
from ctxaudit.digest import tree_digest
from ctxaudit.profiles import PROFILES
from ctxaudit.targets.base import Described

#: what a key's value means (an entry of another format is another key)
FORMAT = 1
#: folders under a target's root that are not part of the target
SKIP = frozenset({".git", ".venv", "__pycache__", ".pytest_cache", ".mypy_cache", ".hypothesis"})


def folder_digest(root: Path) -> str:
    """sha256 over the relative path and bytes of every file under ``root``."""
    return tree_digest([root], root, skip=SKIP)


def target_digest(target: Described) -> str:
    """What identifies the target version's code: its files (and its peer suite's)."""
    kind = targets.get(target.kind)
    resolved = kind.resolve(target.spec, target.repo)
    parts = [target.kind, resolved.version, *(folder_digest(p) for p in kind.code_paths(resolved))]
    peer = kind.peer_suite(resolved) if kind.mutation and kind.mutation.peer else None
    if peer is not None and peer.is_dir():
        parts.append(folder_digest(peer))
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def key_of(parts: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def properties_key(
    target_digest: str,
    suite_digest: str,
    profile: str,
    seed: int | None,
    fixed_seeds: Sequence[int],
    fixes: bool,
    environment: Mapping[str, Any],
    own_tests: bool = False,
) -> str | None:
    """The key of a property phase (``own_tests``: the fix audit runs the target's own
    tests on the fixed trees); None when it draws a random seed (never reused)."""
    if seed is None and not PROFILES[profile].get("derandomize"):
        return None
    return key_of(
        {
            "step": "properties",
            "format": FORMAT,
            "target": target_digest,
            "suite": suite_digest,
            "profile": profile,
            "seed": seed,
            "fixed_seeds": [int(s) for s in fixed_seeds],
            "fixes": fixes,
            "own_tests": own_tests,
            "environment": dict(environment),
        }
    )


def mutation_key(
    target_digest: str,
    suite_digest: str,
    other_sample: float,
    peer: bool,
    findings: str | None,
    only: Sequence[str],
    environment: Mapping[str, Any],
    fixes: Sequence[str] = (),
) -> str:
    parts: dict[str, Any] = {
        "environment": dict(environment),
        "step": "mutation",
        "format": FORMAT,
        "target": target_digest,
        "suite": suite_digest,
        "other_sample": other_sample,
        "peer": peer,
        "findings": findings,
        "only": sorted(only),
    }
    if fixes:  # --mutate fixed (absent otherwise: the released tree's keys stay as they were)
        parts["fixes"] = sorted(fixes)
    return key_of(parts)
