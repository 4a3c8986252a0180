"""Verdict cache: a mutant's verdict is a pure function of the target's files, the ctxaudit
suite, the mutant, the run profile and the seeds, so it is stored under exactly that key.

``.cache/mutation-verdicts/<k[:2]>/<k>.json`` where ``k = sha256(json([target digest,
suite digest, mutant id, run profile, seeds]))``:

- target digest: every file of the copied target package (``engine/``, ``ledger/``);
- suite digest: everything in ctxaudit that can change a verdict: ``model/``, ``tests/``,
  ``mutation/`` (the runner, operators, catalogue, targets and equivalents), ``ctxaudit/``
  (profiles, adapters, findings), ``requirements.lock`` and ``pyproject.toml`` (pytest
  settings); ``__pycache__`` and the work copies are left out;
- run profile: the Hypothesis profile the worker loads, the recheck mode and the known
  findings whose regions the suites leave out (``CTXAUDIT_FINDINGS``);
- seeds: pass 1's and the recheck's, in order.

Any part that changes gives another key, so a stale entry is never read (it is simply not
found). Entries are written atomically; a broken entry reads as a miss.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CACHE_DIR = REPO / ".cache" / "mutation-verdicts"
SUITE_PARTS = ("model", "tests", "mutation", "ctxaudit", "requirements.lock", "pyproject.toml")
SKIP_DIRS = frozenset({"__pycache__", ".pytest_cache", ".hypothesis", ".mypy_cache", "work"})
#: the fields of a mutant that make up its verdict
VERDICT_FIELDS = (
    "status",
    "second_status",
    "killed_by",
    "reason",
    "seconds",
    "tests",
    "tests_completed",
    "seed_checks",
    "robust",
    "robust_reason",
    "robust_by",
    "seed_free",
    "seeds",
)
WORKER_PROFILE = "mutation"


def tree_digest(paths: Iterable[Path], base: Path, skip: frozenset[str] = SKIP_DIRS) -> str:
    """sha256 over the relative path and bytes of every file under ``paths`` (folders
    named in ``skip`` left out)."""
    h = hashlib.sha256()
    files: list[Path] = []
    for p in paths:
        if p.is_file():
            files.append(p)
        elif p.is_dir():
            for dirpath, dirnames, filenames in os.walk(p):
                dirnames[:] = sorted(d for d in dirnames if d not in skip)
                files += [Path(dirpath) / f for f in filenames if not f.endswith((".pyc", ".pyo"))]
    for f in sorted(files, key=lambda f: f.relative_to(base).as_posix()):
        rel = f.relative_to(base).as_posix()
        h.update(rel.encode() + b"\0" + hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()


def suite_digest(repo: Path = REPO) -> str:
    return tree_digest([repo / part for part in SUITE_PARTS], repo)


def target_digest(root: Path, copy_dir: str) -> str:
    return tree_digest([root / copy_dir], root)


def run_profile(recheck: str, findings: str | None = None) -> str:
    """What else the worker's verdicts depend on, as one string."""
    if findings is None:
        findings = os.environ.get("CTXAUDIT_FINDINGS", "")
    return json.dumps(
        {"profile": WORKER_PROFILE, "recheck": recheck, "findings": findings}, sort_keys=True
    )


def entry_key(target: str, suite: str, mutant_id: str, profile: str, seeds: Sequence[int]) -> str:
    parts = [target, suite, mutant_id, profile, [int(s) for s in seeds]]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


@dataclass
class VerdictCache:
    target: str
    suite: str
    profile: str
    seeds: tuple[int, ...]
    directory: Path = CACHE_DIR

    def _path(self, mutant_id: str) -> Path:
        k = entry_key(self.target, self.suite, mutant_id, self.profile, self.seeds)
        return self.directory / k[:2] / f"{k}.json"

    def get(self, mutant_id: str) -> dict[str, Any] | None:
        try:
            data = json.loads(self._path(mutant_id).read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("id") != mutant_id:
            return None
        verdict = data.get("verdict")
        return verdict if isinstance(verdict, dict) else None

    def put(self, mutant_id: str, verdict: dict[str, Any]) -> None:
        path = self._path(mutant_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"id": mutant_id, "verdict": verdict}))
        tmp.replace(path)

    def fill(self, mutants: Iterable[Any]) -> list[Any]:
        """Set the cached verdict on each mutant that has one; returns those mutants."""
        hit = []
        for m in mutants:
            verdict = self.get(m.id)
            if verdict is None or set(verdict) != set(VERDICT_FIELDS):
                continue
            for k in VERDICT_FIELDS:
                setattr(m, k, verdict[k])
            hit.append(m)
        return hit

    def store(self, mutants: Iterable[Any]) -> int:
        n = 0
        for m in mutants:
            if m.status == "pending":
                continue
            self.put(m.id, {k: getattr(m, k) for k in VERDICT_FIELDS})
            n += 1
        return n
