"""Step cache of the audit: a target version's property phase and its mutation run are
pure functions of what they read, so a re-audit reuses them while nothing they read
changed.

``.cache/audit-results/<k[:2]>/<k>.pickle`` where ``k = sha256(json(key))`` and the key
of a step is:

- ``step``: ``properties`` or ``mutation``;
- ``target``: sha256 over every file of the resolved target version's code
  (``Target.code_paths``: a gitreins package folder, a lightspeed-stack checkout with
  its lock file, the ledger's package; ``.git``, ``.venv`` and byte code left out), and,
  where the target has one, its peer suite;
- ``suite``: the digest of everything in ctxaudit that can change a verdict (the same
  as the mutation verdict cache's, ``mutation/cache.py``);
- the step's options: for properties the profile, the seed, the fully fixed tree's
  extra seeds and whether the fix audit runs; for mutation the share of "other"
  mutants, the peer, the known findings whose regions are left out and ``--only``.

A property phase under a random seed is never cached (:func:`properties_key` returns
None): a new seed is a new exploration, not the same step. Release audits that are
to be re-run cheaply pass ``--seed``.

An entry holds what the step returned and the files it wrote under the target's
report folder (the fix audit's patches, ``mutation.json``/``.md``); reusing it writes
them back. Entries are written atomically; a missing or broken entry is a miss, so a
stale entry is never read: any part of the key that changes gives another key.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxaudit import targets
from ctxaudit.profiles import PROFILES
from ctxaudit.target_report import TargetReport
from ctxaudit.targets.base import Described
from mutation import cache as verdict_cache

CACHE_DIR = verdict_cache.REPO / ".cache" / "audit-results"
#: folders under a target's root that are not part of the target
SKIP = frozenset({".git", ".venv", "__pycache__", ".pytest_cache", ".mypy_cache", ".hypothesis"})
FORMAT = 1


def folder_digest(root: Path) -> str:
    """sha256 over the relative path and bytes of every file under ``root``."""
    return verdict_cache.tree_digest([root], root, skip=SKIP)


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
) -> str | None:
    """The key of a property phase; None when it draws a random seed (never reused)."""
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
        }
    )


def mutation_key(
    target_digest: str,
    suite_digest: str,
    other_sample: float,
    peer: bool,
    findings: str | None,
    only: Sequence[str],
    fixes: Sequence[str] = (),
) -> str:
    parts: dict[str, Any] = {
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


@dataclass
class StepCache:
    directory: Path = field(default_factory=lambda: CACHE_DIR)

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.pickle"

    def get(self, key: str | None) -> dict[str, Any] | None:
        """The entry stored under ``key``: ``{"value": ..., "files": {relpath: bytes}}``."""
        if key is None:
            return None
        try:
            entry = pickle.loads(self._path(key).read_bytes())
        except Exception:  # missing, truncated or from another version of the classes
            return None
        if not isinstance(entry, dict) or entry.get("key") != key:
            return None
        return entry

    def put(self, key: str | None, value: Any, files: dict[str, bytes]) -> None:
        if key is None:
            return
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(pickle.dumps({"key": key, "value": value, "files": files}))
        tmp.replace(path)


def collect(folder: Path, names: Sequence[str]) -> dict[str, bytes]:
    """The files ``names`` (files or folders, relative to ``folder``) that exist."""
    out: dict[str, bytes] = {}
    for name in names:
        p = folder / name
        if p.is_file():
            out[name] = p.read_bytes()
        elif p.is_dir():
            for f in sorted(p.rglob("*")):
                if f.is_file():
                    out[f.relative_to(folder).as_posix()] = f.read_bytes()
    return out


def restore(folder: Path, files: dict[str, bytes], clear: Sequence[str] = ()) -> None:
    """Write ``files`` back under ``folder``; the folders in ``clear`` are emptied of
    ``*.patch`` first (a stale patch of an earlier run is never left next to them)."""
    for name in clear:
        for old in (folder / name).glob("*.patch"):
            old.unlink()
    for rel, data in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


#: the files of a target's report folder each step writes (besides findings.json/.md,
#: written again from the reused report)
PROPERTY_FILES = ("fixes",)
MUTATION_FILES = ("mutation.json", "mutation.md")


class StepCaches:
    """The audit's use of the step cache: keys, reuse and store, and a tally."""

    def __init__(self, enabled: bool, store: StepCache | None = None) -> None:
        self.enabled = enabled
        self.store = store or StepCache()
        self._suite: str | None = None
        self._targets: dict[str, str] = {}
        self.reused = {"properties": 0, "mutation": 0}
        self.ran = {"properties": 0, "mutation": 0}

    @property
    def suite(self) -> str:
        if self._suite is None:
            self._suite = verdict_cache.suite_digest()
        return self._suite

    def target(self, target: Described) -> str:
        if target.label not in self._targets:
            self._targets[target.label] = target_digest(target)
        return self._targets[target.label]

    def properties_key(
        self, target: Described, profile: str, seed: int | None, fixed_seeds: Sequence[int]
    ) -> str | None:
        fixes = os.environ.get("CTXAUDIT_FIXES") != "0"
        try:
            digest = self.target(target)
        except Exception:  # a target that does not resolve: the run itself reports why
            return None
        return properties_key(digest, self.suite, profile, seed, fixed_seeds, fixes)

    def reuse_properties(
        self, key: str | None, target: Described, out: Path
    ) -> TargetReport | None:
        from ctxaudit.audit import write_reports

        entry = self.store.get(key) if self.enabled else None
        if entry is None or not isinstance(entry["value"], TargetReport):
            return None
        restore(out / target.label, entry["files"], clear=PROPERTY_FILES)
        write_reports(entry["value"], out)
        self.reused["properties"] += 1
        return entry["value"]

    def store_properties(self, key: str | None, report: TargetReport, out: Path) -> None:
        self.ran["properties"] += 1
        if report.exit_status in (0, 1) and report.tests:  # a suite that ran
            label = f"{report.target}-{report.version}"
            self.store.put(key, report, collect(out / label, PROPERTY_FILES))

    def mutation_key(
        self,
        target: Described,
        other_sample: float,
        peer: bool,
        known: Sequence[dict[str, Any]],
        only: Sequence[str],
        fixes: Sequence[str] = (),
    ) -> str | None:
        findings = ",".join(k["id"] for k in known if k["affects"]) or "none"
        try:
            digest = self.target(target)
        except Exception:
            return None
        return mutation_key(digest, self.suite, other_sample, peer, findings, only, fixes)

    def reuse_mutation(
        self, key: str | None, target: Described, out: Path
    ) -> tuple[int, str] | None:
        entry = self.store.get(key) if self.enabled else None
        if entry is None:
            return None
        restore(out / target.label, entry["files"])
        self.reused["mutation"] += 1
        code, output = entry["value"]
        return int(code), str(output)

    def store_mutation(
        self, key: str | None, code: int, output: str, target: Described, out: Path
    ) -> None:
        self.ran["mutation"] += 1
        if code in (0, 1):  # a run that finished (its gate passed or failed)
            self.store.put(key, (code, output), collect(out / target.label, MUTATION_FILES))

    def summary(self) -> str:
        r, n = self.reused, self.ran
        return (
            f"properties of {r['properties']} target version(s) (ran {n['properties']}), "
            f"mutation runs of {r['mutation']} (ran {n['mutation']})"
        )
