"""A baseline the maintainers own: the known findings their gate accepts for now.

An audit fails while a known finding reproduces; a harness whose known findings have
no fix yet would have a red gate from the first day. A baseline file lists the
findings the project accepts, each with a person's reason. With ``--baseline FILE``:

- a known finding that reproduces and is in the file does not fail the gate;
- any other failure does: a new finding, a known finding not in the file;
- so does an entry that no longer reproduces on any audited version of its target
  with no new finding (a new failure can keep a known finding's check from showing
  it): it must be removed, so that the finding's return fails the gate (a regression
  of a fixed bug is never carved out as "known");
- an entry whose check ctxaudit could not make (its own error, a suite that did not
  run) neither reproduces nor is stale: the verdict's ``unchecked`` says why, and the
  audit ends "could not check" (exit 2), never a pass.

The file is TOML, written by ``ctxaudit baseline`` and edited by hand::

    [[accepted]]
    id = "LS-OWNER-TURN-NOT-REPLAYED"
    target = "lightspeed-stack"
    property = "C1"
    why = "OGX replays only what it stored itself; tracked upstream"
"""

from __future__ import annotations

import tomllib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxaudit import atomic

#: what ``ctxaudit baseline`` writes where a person must give the reason
NO_REASON = ""

_HEADER = """\
# ctxaudit baseline: the known findings this project's gate accepts for now.
# `ctxaudit audit --baseline FILE` passes while only these reproduce; it fails on any
# other finding, and on an entry that no longer reproduces (remove it, so that the
# finding's return fails the gate). Give each entry its reason in `why`.
"""


class BaselineError(ValueError):
    """A baseline file that cannot be read: one line saying why."""


@dataclass(frozen=True)
class Entry:
    id: str
    target: str
    property: str
    why: str


@dataclass(frozen=True)
class Baseline:
    path: Path
    entries: tuple[Entry, ...]

    def ids(self) -> set[str]:
        return {e.id for e in self.entries}

    def unreasoned(self) -> list[str]:
        return [e.id for e in self.entries if not e.why.strip()]


@dataclass(frozen=True)
class Verdict:
    """What the baseline makes of one run's reports."""

    #: a version fails: a new finding, or a known one the baseline does not accept
    failing: dict[str, list[str]]
    #: per version, the reproducing known findings the baseline accepts
    accepted: dict[str, list[str]]
    #: entries of an audited target that reproduced on none of its versions
    stale: list[Entry]
    #: entries of an audited target whose check ctxaudit could not make, and why: they
    #: neither reproduce nor are stale (the audit's exit 2, never a pass)
    unchecked: list[tuple[Entry, str]] = field(default_factory=list)

    @property
    def fails(self) -> bool:
        return bool(self.failing or self.stale)


def load(path: Path) -> Baseline:
    """The baseline in ``path``; :class:`BaselineError` (one line) when it cannot be read."""
    try:
        # utf-8-sig: a file an editor saved with a byte-order mark reads the same
        data = tomllib.loads(Path(path).read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise BaselineError(f"--baseline {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"--baseline {path}: cannot read it ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise BaselineError(f"--baseline {path}: not TOML ({exc})") from None
    unknown = set(data) - {"accepted"}
    if unknown:
        raise BaselineError(f"--baseline {path}: unknown table(s) {', '.join(sorted(unknown))}")
    rows = data.get("accepted", [])
    if not isinstance(rows, list):
        raise BaselineError(f"--baseline {path}: `accepted` must be an array of tables")
    entries: list[Entry] = []
    for n, row in enumerate(rows, 1):
        if not isinstance(row, dict):
            raise BaselineError(f"--baseline {path}: entry {n} is not a table")
        missing = [k for k in ("id", "target") if not isinstance(row.get(k), str) or not row[k]]
        if missing:
            raise BaselineError(f"--baseline {path}: entry {n} has no {' or '.join(missing)}")
        extra = set(row) - {"id", "target", "property", "why"}
        if extra:
            raise BaselineError(
                f"--baseline {path}: entry {n} ({row['id']}): unknown key(s) "
                + ", ".join(sorted(extra))
            )
        entries.append(
            Entry(row["id"], row["target"], str(row.get("property", "")), str(row.get("why", "")))
        )
    ids = [e.id for e in entries]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise BaselineError(f"--baseline {path}: listed twice: {', '.join(twice)}")
    return Baseline(Path(path), tuple(entries))


def reproducing(report: Any) -> list[str]:
    """The known findings that reproduce on a version (its report's ``known``)."""
    return [str(k["id"]) for k in report.known if k.get("affects")]


def judge(baseline: Baseline, reports: Iterable[Any]) -> Verdict:
    """Each version's failures that the baseline does not accept, and its stale entries.

    ``reports``: the run's target reports (``target``, the kind; ``known``; ``findings``,
    the new ones), ``label`` naming the version."""
    reports = list(reports)
    accepted_ids = baseline.ids()
    failing: dict[str, list[str]] = {}
    accepted: dict[str, list[str]] = {}
    seen: set[str] = set()
    for report in reports:
        label = f"{report.target}-{report.version}"
        known = reproducing(report)
        seen.update(known)
        why = _new_findings(report.findings)
        why += [f"known finding {k}, not in the baseline" for k in known if k not in accepted_ids]
        if why:
            failing[label] = why
        mine = [k for k in known if k in accepted_ids]
        if mine:
            accepted[label] = mine
    stale: list[Entry] = []
    unchecked: list[tuple[Entry, str]] = []
    for entry in baseline.entries:
        if entry.id in seen:
            continue
        # a known finding's check can be masked by a new failure on its way (its program
        # fails on another property first): only versions with no new finding tell that
        # an entry no longer reproduces, and only where its check was made
        states = [_checked(entry.id, r) for r in reports if r.target == entry.target]
        whys = [why for checked, why in states if not checked and why]
        if any(checked for checked, _ in states):
            stale.append(entry)
        elif whys:
            unchecked.append((entry, "; ".join(dict.fromkeys(whys))))
    return Verdict(failing, accepted, stale, unchecked)


def _checked(finding: str, report: Any) -> tuple[bool, str]:
    """Whether ``report``'s version tells that ``finding`` does not reproduce there (it
    does not reproduce there and its check was made, on a version with no new finding),
    and when its check was not made, why ("" when a new finding masks it)."""
    known = [k for k in report.known if k["id"] == finding]
    if known and known[0].get("could_not_check"):
        label = f"{report.target}-{report.version}"
        return False, f"{label}: {known[0]['could_not_check']}"
    if not known and not report.known:  # no known finding's check ran at all
        label = f"{report.target}-{report.version}"
        return False, f"{label}: the audit checked none of its known findings"
    return (not report.findings, "")


def _new_findings(findings: Sequence[Any]) -> list[str]:
    """New findings in one phrase: how many, by property, and the first one's message."""
    if not findings:
        return []
    props = Counter(p for f in findings for p in f.properties[:1])
    by = ", ".join(f"{p} {n}" for p, n in sorted(props.items()))
    more = f" (and {len(findings) - 1} more: {by}; see findings.md)" if len(findings) > 1 else ""
    return [f"new finding: {findings[0].message}{more}"]


def write(path: Path, reports: Iterable[Any]) -> list[Entry]:
    """The baseline of what reproduces now: one entry per known finding that reproduces
    on any of the versions, its reason left for a person to give. Written whole."""
    entries: dict[str, Entry] = {}
    for report in reports:
        for k in report.known:
            if k.get("affects") and k["id"] not in entries:
                entries[k["id"]] = Entry(k["id"], report.target, k["property"], NO_REASON)
    atomic.write_text(Path(path), render(entries.values()))
    return list(entries.values())


def render(entries: Iterable[Entry]) -> str:
    out = [_HEADER]
    for e in entries:
        out.append(
            "\n[[accepted]]\n"
            f"id = {_quote(e.id)}\n"
            f"target = {_quote(e.target)}\n"
            f"property = {_quote(e.property)}\n"
            f"why = {_quote(e.why)}  # why this project accepts it, for now\n"
        )
    return "".join(out)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
