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
found). Entries are written atomically (``ctxaudit/atomic.py``).

An entry is ``{"format", "id", "verdict", "digest"}``, ``digest`` being the sha256 of the
canonical JSON of the id and the verdict. It is read only when it parses, its digest
matches and its verdict has the schema of :data:`VERDICT_FIELDS` (types and allowed
statuses); anything else is a miss, said in one line on stderr, and the mutant runs
again. A mutant in error (a run that died by a signal not ctxaudit's, in any pass) has
no verdict and is never stored.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxaudit import atomic
from ctxaudit.digest import suite_digest as suite_digest  # the verdicts' key
from ctxaudit.digest import tree_digest
from ctxaudit.paths import REPO_ROOT

REPO = REPO_ROOT
CACHE_DIR = REPO / ".cache" / "mutation-verdicts"
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
#: the entry layout; part of the key, so entries of another layout are simply not found
ENTRY_FORMAT = 2
#: the verdicts a stored mutant (and each of its passes) may have; "error" and "pending"
#: are not verdicts and are never stored
STORED_STATUSES = frozenset({"killed", "timeout", "crashed", "survived", "no-coverage", "flaky"})
NOT_A_VERDICT = ("error", "pending")


def target_digest(root: Path, copy_dir: str) -> str:
    return tree_digest([root / copy_dir], root)


def run_profile(recheck: str, findings: str | None = None, tests: Sequence[str] = ()) -> str:
    """What else the worker's verdicts depend on, as one string. ``tests``: the part of
    the suite a run was restricted to (empty: the whole suite)."""
    if findings is None:
        findings = os.environ.get("CTXAUDIT_FINDINGS", "")
    profile: dict[str, object] = {
        "profile": WORKER_PROFILE,
        "recheck": recheck,
        "findings": findings,
    }
    if tests:  # absent for the whole suite, so the keys of whole runs stay as they were
        profile["tests"] = sorted(tests)
    return json.dumps(profile, sort_keys=True)


def entry_key(target: str, suite: str, mutant_id: str, profile: str, seeds: Sequence[int]) -> str:
    parts = [target, suite, mutant_id, profile, [int(s) for s in seeds], ENTRY_FORMAT]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def content_digest(content: Any) -> str:
    """sha256 of the canonical JSON of ``content`` (sorted keys, no spaces)."""
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


class InvalidEntry(ValueError):
    """A cache entry that parses but cannot be trusted. One line: why."""


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _is_seconds(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v >= 0


def _optional(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda v: v is None or check(v)


def _status(v: Any) -> bool:
    return v in STORED_STATUSES


def _seed_check(v: Any) -> bool:
    return (
        isinstance(v, dict)
        and set(v) <= {"seed", "status", "killed_by", "seed_free", "seconds"}
        and _is_int(v.get("seed"))
        and _status(v.get("status"))
        and _optional(_is_str)(v.get("killed_by"))
        and _optional(lambda b: isinstance(b, bool))(v.get("seed_free"))
        and _optional(_is_seconds)(v.get("seconds"))
    )


#: field -> what a stored value must be
VERDICT_SCHEMA: dict[str, Callable[[Any], bool]] = {
    "status": _status,
    "second_status": _optional(_status),
    "killed_by": _optional(_is_str),
    "reason": _is_str,
    "seconds": _is_seconds,
    "tests": _is_int,
    "tests_completed": _optional(_is_int),
    "seed_checks": lambda v: isinstance(v, list) and all(_seed_check(c) for c in v),
    "robust": lambda v: v in (None, "robust", "seed-dependent"),
    "robust_reason": _is_str,
    "robust_by": _optional(_is_str),
    "seed_free": lambda v: isinstance(v, bool),
    "seeds": lambda v: isinstance(v, list) and all(_is_int(s) for s in v),
}
assert set(VERDICT_SCHEMA) == set(VERDICT_FIELDS)


def check_verdict(verdict: Any) -> None:
    """Raise :class:`InvalidEntry` unless ``verdict`` is a stored mutant's verdict (or
    the run's baseline entry: ``{"failing": [test ids]}``)."""
    if not isinstance(verdict, dict):
        raise InvalidEntry(f"verdict is a {type(verdict).__name__}, not an object")
    if set(verdict) == {"failing"}:
        if not (isinstance(verdict["failing"], list) and all(map(_is_str, verdict["failing"]))):
            raise InvalidEntry("failing is not a list of test ids")
        return
    if set(verdict) != set(VERDICT_FIELDS):
        missing = sorted(set(VERDICT_FIELDS) - set(verdict))
        extra = sorted(set(verdict) - set(VERDICT_FIELDS))
        raise InvalidEntry(f"verdict fields differ (missing {missing}, unknown {extra})")
    for name, ok in VERDICT_SCHEMA.items():
        if not ok(verdict[name]):
            raise InvalidEntry(f"{name} is {verdict[name]!r}")


def has_no_verdict(m: Any) -> bool:
    """The mutant, or one of its passes, did not come to a verdict (pending, error)."""
    if m.status in NOT_A_VERDICT or getattr(m, "second_status", None) in NOT_A_VERDICT:
        return True
    return any(c.get("status") in NOT_A_VERDICT for c in getattr(m, "seed_checks", []))


def warn(path: Path, why: str) -> None:
    print(f"mutation: verdict cache entry {path} ignored ({why}); running again", file=sys.stderr)


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
        """The stored verdict, or None: not stored, or invalid (said on stderr)."""
        path = self._path(mutant_id)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            warn(path, f"unreadable: {exc}")
            return None
        try:
            return self._verdict(mutant_id, text)
        except InvalidEntry as exc:
            warn(path, str(exc))
            return None

    @staticmethod
    def _verdict(mutant_id: str, text: str) -> dict[str, Any]:
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise InvalidEntry(f"not JSON: {exc}") from None
        if not isinstance(data, dict) or set(data) != {"format", "id", "verdict", "digest"}:
            raise InvalidEntry("not a verdict cache entry")
        if data["format"] != ENTRY_FORMAT:
            raise InvalidEntry(f"format {data['format']!r}, not {ENTRY_FORMAT}")
        if data["id"] != mutant_id:
            raise InvalidEntry(f"it holds {data['id']!r}, not {mutant_id!r}")
        if data["digest"] != content_digest({"id": data["id"], "verdict": data["verdict"]}):
            raise InvalidEntry("digest does not match its content")
        check_verdict(data["verdict"])
        verdict: dict[str, Any] = data["verdict"]
        return verdict

    def put(self, mutant_id: str, verdict: dict[str, Any]) -> None:
        check_verdict(verdict)  # never store what would not be read back
        content = {"id": mutant_id, "verdict": verdict}
        entry = {"format": ENTRY_FORMAT, **content, "digest": content_digest(content)}
        atomic.write_text(self._path(mutant_id), json.dumps(entry, sort_keys=True))

    def fill(self, mutants: Iterable[Any]) -> list[Any]:
        """Set the cached verdict on each mutant that has one; returns those mutants."""
        hit = []
        for m in mutants:
            verdict = self.get(m.id)
            if verdict is None or "status" not in verdict:
                continue
            for k in VERDICT_FIELDS:
                setattr(m, k, verdict[k])
            hit.append(m)
        return hit

    def store(self, mutants: Iterable[Any]) -> int:
        """Store each mutant's verdict; a mutant without one (pending, or in error in
        any pass) is left out, so it runs again next time."""
        n = 0
        for m in mutants:
            if has_no_verdict(m):
                continue
            try:
                self.put(m.id, {k: getattr(m, k) for k in VERDICT_FIELDS})
            except InvalidEntry as exc:  # ctxaudit's own error: say so, store nothing
                print(f"mutation: verdict of {m.id} not stored ({exc})", file=sys.stderr)
                continue
            n += 1
        return n
