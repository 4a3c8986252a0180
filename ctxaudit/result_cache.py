"""Step cache of the audit: a target version's property phase and its mutation run are
pure functions of what they read, so a re-audit reuses them while nothing they read
changed.

``.cache/audit-results/<k[:2]>/<k>.json`` where ``k = sha256(json(key))`` and the key
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
them back, only inside that folder. Entries are JSON (a property phase's
:class:`TargetReport` as its fields, a mutation run as its exit code and output; files
base64), written atomically, with the sha256 of their canonical JSON beside the content
(the file keeps the value's own order: a reused report lists its properties as a fresh
one does). An entry is read only when it parses, its digest matches, its value has the
step's shape (the report's field types; a mutation exit code that is a verdict, 0 or 1),
it was made for the request (the report's target, version, seed and profile, the
mutation report's target and version: an entry copied under another key, its digest
made to match, is not another version's result), every patch its report links is among
its files, and its files stay inside the report folder; anything else is a miss, said
in one line on stderr. A missing entry is a silent miss, so a stale entry is never read:
any part of the key that changes gives another key. An entry that cannot be written (a
full or read-only disk) is not stored, said in one line: the step's verdict stands.

The keys are :mod:`ctxaudit.result_keys`'s, the values' reading back from JSON
:mod:`ctxaudit.result_json`'s; this module is the store and the audit's use of it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ctxaudit import atomic, fix_patches
from ctxaudit.digest import suite_digest
from ctxaudit.environment import fingerprint
from ctxaudit.paths import REPO_ROOT
from ctxaudit.result_json import (
    VERDICT_CODES,
    InvalidEntry,
    entry_path_error,
    mutation_from_json,
    report_from_json,
    report_to_json,
    shown,
)
from ctxaudit.result_keys import (
    FORMAT,
    SKIP,
    folder_digest,
    key_of,
    mutation_key,
    properties_key,
    target_digest,
)
from ctxaudit.target_report import TargetReport
from ctxaudit.targets.base import Described

__all__ = [  # the keys and values the cache's users (and tests) name through it
    "FORMAT",
    "SKIP",
    "VERDICT_CODES",
    "InvalidEntry",
    "entry_path_error",
    "folder_digest",
    "key_of",
    "mutation_from_json",
    "mutation_key",
    "properties_key",
    "report_from_json",
    "report_to_json",
    "target_digest",
    "StepCache",
    "StepCaches",
    "collect",
    "restore",
    "unsafe_path",
    "missing_patches",
    "mutation_made_for",
    "CACHE_DIR",
    "PROPERTY_FILES",
    "MUTATION_FILES",
    "suite_digest",
]

CACHE_DIR = REPO_ROOT / ".cache" / "audit-results"
#: the layout of an entry file (the key's ``FORMAT`` is what its value means)
ENTRY_FORMAT = 2
STEPS = ("properties", "mutation")


def _warn(path: Path, why: str) -> None:
    print(f"ctxaudit: step cache entry {path} ignored ({why}); running the step", file=sys.stderr)


def _canonical(content: Any) -> bytes:
    return json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def _digest(content: Any) -> str:
    return hashlib.sha256(_canonical(content)).hexdigest()


@dataclass
class StepCache:
    """Entries on disk: ``{"format", "key", "step", "value", "files", "digest"}``,
    ``files`` mapping a path relative to the report folder to its bytes (base64) and
    ``digest`` the sha256 of the canonical JSON of the rest."""

    directory: Path = field(default_factory=lambda: CACHE_DIR)

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str | None, step: str | None = None) -> dict[str, Any] | None:
        """The entry stored under ``key`` (of ``step``, when given):
        ``{"key", "step", "value", "files": {relpath: bytes}}``; None when there is none
        or it is invalid (said in one line on stderr)."""
        if key is None:
            return None
        path = self._path(key)
        try:
            text = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            _warn(path, f"unreadable: {exc}")
            return None
        try:
            return self._entry(key, step, text)
        except InvalidEntry as exc:
            _warn(path, str(exc))
            return None

    @staticmethod
    def _entry(key: str, step: str | None, text: bytes) -> dict[str, Any]:
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise InvalidEntry(f"not JSON: {exc}") from None
        fields = {"format", "key", "step", "value", "files", "digest"}
        if not isinstance(data, dict) or set(data) != fields:
            raise InvalidEntry("not a step cache entry")
        if data["format"] != ENTRY_FORMAT:
            raise InvalidEntry(f"format {shown(data['format'])}, not {ENTRY_FORMAT}")
        if data["key"] != key:
            raise InvalidEntry("it holds another key's entry")
        content = {k: data[k] for k in ("key", "step", "value", "files")}
        if data["digest"] != _digest(content):
            raise InvalidEntry("digest does not match its content")
        if data["step"] not in STEPS or (step is not None and data["step"] != step):
            raise InvalidEntry(f"step {shown(data['step'])}, not {step or ' or '.join(STEPS)}")
        if not isinstance(data["files"], dict):
            raise InvalidEntry("files is not an object")
        files: dict[str, bytes] = {}
        for rel, blob in data["files"].items():
            why = entry_path_error(rel)
            if why is not None:
                raise InvalidEntry(why)
            if not isinstance(blob, str):
                raise InvalidEntry(f"file {rel!r} is not base64 text")
            try:
                files[rel] = base64.b64decode(blob.encode("ascii"), validate=True)
            except (binascii.Error, UnicodeEncodeError):
                raise InvalidEntry(f"file {rel!r} is not base64") from None
        return {"key": key, "step": data["step"], "value": data["value"], "files": files}

    def put(
        self, key: str | None, value: Any, files: dict[str, bytes], step: str = "properties"
    ) -> None:
        """Store ``value`` (JSON) and ``files``; a value that is not JSON is not stored
        (said in one line: a miss next time, never a wrong entry)."""
        if key is None:
            return
        content = {
            "key": key,
            "step": step,
            "value": value,
            "files": {rel: base64.b64encode(data).decode("ascii") for rel, data in files.items()},
        }
        try:
            digest = _digest(content)
        except (TypeError, ValueError) as exc:
            print(
                f"ctxaudit: step {step} not cached: its result is not JSON ({exc})", file=sys.stderr
            )
            return
        # the digest is over the canonical (sorted) JSON; the file keeps the value's order
        text = json.dumps(
            {"format": ENTRY_FORMAT, **content, "digest": digest},
            separators=(",", ":"),
            ensure_ascii=True,
        ).encode()
        try:
            atomic.write_bytes(self._path(key), text)
        except OSError as exc:  # the step ran and its verdict stands; only reuse is lost
            print(
                f"ctxaudit: step {step} not cached: cannot write {self._path(key)} "
                f"({exc.strerror or exc})",
                file=sys.stderr,
            )


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


def unsafe_path(folder: Path, rel: Any) -> str | None:
    """Why writing ``rel`` under ``folder`` would leave it (None: it stays inside)."""
    why = entry_path_error(rel)
    if why is not None:
        return why
    root = folder.resolve()
    if not (root / rel).resolve().is_relative_to(root):  # a symlink that leads out
        return f"file {rel!r} resolves outside {folder}"
    return None


def restore(folder: Path, files: dict[str, bytes], clear: Sequence[str] = ()) -> None:
    """Write ``files`` back under ``folder`` (each atomically); the folders in ``clear``
    are emptied of ``*.patch`` first (a stale patch of an earlier run is never left next
    to them). A path that would leave ``folder`` (absolute, with ``..``, or through a
    link) raises :class:`InvalidEntry` before anything is written."""
    for rel in files:
        why = unsafe_path(folder, rel)
        if why is not None:
            raise InvalidEntry(why)
    for name in clear:
        for old in (folder / name).glob("*.patch"):
            old.unlink()
    for rel, data in files.items():
        atomic.write_bytes(folder / rel, data)


def _same_request(made: dict[str, Any], request: dict[str, Any]) -> None:
    """Raise :class:`InvalidEntry` unless the entry was ``made`` for ``request`` (each
    part the request names)."""
    differs = {k: made.get(k) for k, v in request.items() if made.get(k) != v}
    if differs:

        def said(d: dict[str, Any]) -> str:
            return ", ".join(f"{k} {d.get(k)}" for k in request)

        raise InvalidEntry(f"made for {said(made)}, not {said(request)}")


def mutation_made_for(files: dict[str, bytes]) -> dict[str, Any]:
    """The target and version a stored mutation run's ``mutation.json`` is of."""
    try:
        config = json.loads(files["mutation.json"])["config"]
        return {"target": config["target"], "version": config["version"]}
    except (KeyError, TypeError, ValueError):
        raise InvalidEntry("it holds no readable mutation.json naming its target") from None


def missing_patches(report: Any, files: dict[str, bytes]) -> list[str]:
    """The patches ``report`` (a ``TargetReport``) links that ``files`` (a version
    folder's, as the step cache holds them) lack: a shared patch
    (``../<target>-fixes/<name>``) is held as ``fixes/<name>``, a version's own as its
    path."""
    missing = []
    for link in fix_patches.links(report.fixes, report.fixed):
        parts = PurePosixPath(link).parts
        held = f"{fix_patches.STAGING}/{parts[-1]}" if parts[:1] == ("..",) else link
        if held not in files:
            missing.append(link)
    return missing


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
        #: key -> what it was computed for (target, version, and for a property phase
        #: its seed and profile): an entry is reused only for that
        self._requests: dict[str, dict[str, Any]] = {}

    @property
    def suite(self) -> str:
        if self._suite is None:
            self._suite = suite_digest()
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
        own = os.environ.get("CTXAUDIT_OWN_TESTS") == "1"
        key = properties_key(
            digest, self.suite, profile, seed, fixed_seeds, fixes, fingerprint(os.environ), own
        )
        if key is not None:
            self._requests[key] = {
                "target": target.kind, "version": target.version, "seed": seed, "profile": profile,
            }  # fmt: skip
        return key

    def reuse_properties(
        self, key: str | None, target: Described, out: Path
    ) -> TargetReport | None:
        from ctxaudit.audit import write_reports

        request = self._request(key, target)

        def read(value: Any) -> TargetReport:
            report = report_from_json(value)
            made = {"target": report.target, "version": report.version,
                    "seed": report.seed, "profile": report.profile}  # fmt: skip
            _same_request(made, request)
            return report

        entry = self._valid(key, "properties", out / target.label, read)
        if entry is None:
            return None
        report: TargetReport = entry[0]
        files = entry[1]
        restore(out / target.label, files, clear=PROPERTY_FILES)
        write_reports(report, out)
        self.reused["properties"] += 1
        return report

    def _valid(
        self, key: str | None, step: str, folder: Path, read: Any
    ) -> tuple[Any, dict[str, bytes]] | None:
        """The entry's value (``read`` from its JSON) and files, when it is valid and its
        files stay inside ``folder``; else None (an invalid one said on stderr)."""
        if not self.enabled or key is None:
            return None
        entry = self.store.get(key, step)
        if entry is None:
            return None
        try:
            value = read(entry["value"])
            if step == "properties":
                missing = missing_patches(value, entry["files"])
                if missing:
                    raise InvalidEntry(f"its report links patches it does not hold: {missing}")
            for rel in entry["files"]:
                why = unsafe_path(folder, rel)
                if why is not None:
                    raise InvalidEntry(why)
        except InvalidEntry as exc:
            _warn(self.store._path(key), str(exc))
            return None
        return value, entry["files"]

    def store_properties(self, key: str | None, report: TargetReport, out: Path) -> None:
        self.ran["properties"] += 1
        # a suite that ran, and whose every test ctxaudit could check: what it could not
        # check is its own failure, never a verdict to reuse
        if report.exit_status in (0, 1) and report.tests and not report.unchecked:
            label = f"{report.target}-{report.version}"
            files = collect(out / label, PROPERTY_FILES)
            missing = missing_patches(report, files)
            if missing:  # reused, the report would link files that are not there
                print(f"ctxaudit: step properties of {label} not cached: the patches its "
                      f"report links are missing: {missing}", file=sys.stderr)  # fmt: skip
                return
            self.store.put(key, report_to_json(report), files, step="properties")

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
        key = mutation_key(
            digest, self.suite, other_sample, peer, findings, only, fingerprint(os.environ), fixes
        )
        self._requests[key] = {"target": target.kind, "version": target.version}
        return key

    def _request(self, key: str | None, target: Described) -> dict[str, Any]:
        """What an entry under ``key`` must have been made for: the request its key was
        computed for, at least the target version reused."""
        known = self._requests.get(key or "")
        return dict(known) if known else {"target": target.kind, "version": target.version}

    def reuse_mutation(
        self, key: str | None, target: Described, out: Path
    ) -> tuple[int, str] | None:
        request = self._request(key, target)
        folder = out / target.label
        entry = self._valid(key, "mutation", folder, mutation_from_json)
        if entry is None:
            return None
        (code, output), files = entry
        try:
            _same_request(mutation_made_for(files), request)
        except InvalidEntry as exc:
            _warn(self.store._path(key or ""), str(exc))
            return None
        restore(out / target.label, files)
        self.reused["mutation"] += 1
        return code, output

    def store_mutation(
        self, key: str | None, code: int, output: str, target: Described, out: Path
    ) -> None:
        """Store a mutation run only when its exit code is a verdict (the gate passed or
        failed); a run that could not run or crashed (2, 3, a signal) is never stored."""
        self.ran["mutation"] += 1
        if code in VERDICT_CODES:
            files = collect(out / target.label, MUTATION_FILES)
            value = {"code": code, "output": output}
            self.store.put(key, value, files, step="mutation")

    def summary(self) -> str:
        r, n = self.reused, self.ran
        return (
            f"properties of {r['properties']} target version(s) (ran {n['properties']}), "
            f"mutation runs of {r['mutation']} (ran {n['mutation']})"
        )
