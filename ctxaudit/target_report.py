"""One target version's report as data: its verdicts, its findings, how they are read.

:class:`TargetReport` is what ``findings.json`` holds and ``findings.md``
(``ctxaudit/templates/findings.md.j2``) shows; :func:`extract_findings` reads the
failures Hypothesis reported in a test, :func:`judge` turns the tests' outcomes and
the known findings into a verdict per property.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ctxaudit.outcomes import COULD_NOT_CHECK, FAILS, HOLDS, NOT_CHECKED
from ctxaudit.suite import commit as suite_commit

_PROP_RE = re.compile(r"^((?:[BVSC]\d+)(?:/[BVSC]\d+)*)\b")


@dataclass
class Finding:
    properties: list[str]
    message: str
    test: str
    reproduction: str
    owners: list[str] = field(default_factory=list)  # findings whose fix alone makes it pass
    attribution: str = ""  # how the fix audit attributed it (empty: not attributed)
    rerun: str = ""  # the command that reruns its attribution (bin/ctxaudit attribute)


@dataclass
class TargetReport:
    target: str
    version: str
    spec: str
    profile: str
    seed: int | None
    elapsed_s: float
    exit_status: int
    verdicts: dict[str, str] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    known: list[dict[str, Any]] = field(default_factory=list)
    tests: list[dict[str, Any]] = field(default_factory=list)
    suite: str = field(default_factory=suite_commit)
    # the fix audit (ctxaudit/fixaudit/): each known finding's fix and its status,
    # the failures it attributed to a known finding, the fully fixed tree's verdicts
    fixes: list[dict[str, Any]] = field(default_factory=list)
    attributed: list[Finding] = field(default_factory=list)
    fixed: dict[str, Any] = field(default_factory=dict)
    # what ctxaudit could not check: {"nodeid", "properties", "why"} per test (its own
    # error, a tree it cannot drive, an environment that does not build, a suite that
    # did not run); never findings
    unchecked: list[dict[str, Any]] = field(default_factory=list)
    # the shape coverage of the property phase: each table a suite declared, with the
    # steps that reached each cell outside the known findings' regions
    # (ctxaudit/shapes.py); a cell at 0 is a gap
    shapes: list[dict[str, Any]] = field(default_factory=list)
    # the Python and test libraries the property phase's process imported, and the
    # import variables it ran with (ctxaudit/environment.py): its verdicts are theirs
    environment: dict[str, str] = field(default_factory=dict)

    @staticmethod
    def printed(command: str) -> str:
        """A command the report prints, as it runs where this ctxaudit is (the reports
        of an installed ctxaudit say ``ctxaudit ...``: :func:`ctxaudit.replay.printed`)."""
        from ctxaudit.replay import printed

        return printed(command)

    @property
    def unpinned(self) -> list[str]:
        """The test libraries its suites imported at other versions than ctxaudit pins."""
        from ctxaudit.environment import unpinned

        return unpinned(self.environment)

    @property
    def ok(self) -> bool:
        """Every property holds. (Known findings count: a version they affect fails.)"""
        return (
            self.exit_status == 0
            and not self.unchecked
            and all(v in (HOLDS, NOT_CHECKED) for v in self.verdicts.values())
        )

    @property
    def outcome(self) -> str:
        """The version's outcome: ``fails`` when the target breaks a property (a finding,
        known or new), else ``could not check`` when ctxaudit could not check something,
        else ``holds``."""
        if any(v == FAILS for v in self.verdicts.values()):
            return FAILS
        if self.unchecked or any(v == COULD_NOT_CHECK for v in self.verdicts.values()):
            return COULD_NOT_CHECK
        return HOLDS


def judge(report: TargetReport, props: dict[str, str]) -> None:
    """Each of ``props``: fails (a known finding affects it or a test found a failure),
    could not check (a test of it, or a known finding's check, ended in ctxaudit's own
    error), holds (a test checked it) or not checked. Adds the tests' findings to the
    report; a test ctxaudit could not check goes to ``report.unchecked``, never to the
    findings."""
    checked: set[str] = set()
    failed: set[str] = {
        prop for k in report.known if k["affects"] for prop in k["property"].split("/")
    }
    # what was already known to be unchecked (a suite that did not run)
    unchecked: set[str] = {p for u in report.unchecked for p in u["properties"]}
    for k in report.known:
        if k.get("could_not_check"):
            unchecked.update(k["property"].split("/"))
            report.unchecked.append(
                {"nodeid": k["repro"], "properties": k["property"].split("/"),
                 "why": f"known finding {k['id']}: {k['could_not_check']}"}
            )  # fmt: skip
    for test in report.tests:
        checked.update(test["properties"])
        if test.get("could_not_check"):
            unchecked.update(test["properties"])
            report.unchecked.append(
                {"nodeid": test["nodeid"], "properties": list(test["properties"]),
                 "why": test["could_not_check"]}
            )  # fmt: skip
        elif test["outcome"] == "failed":
            for f in extract_findings(test):
                report.findings.append(f)
                failed.update(f.properties)
    for prop in props:
        if prop in failed:
            report.verdicts[prop] = FAILS
        elif prop in unchecked:
            report.verdicts[prop] = COULD_NOT_CHECK
        elif prop in checked:
            report.verdicts[prop] = HOLDS
        else:
            report.verdicts[prop] = NOT_CHECKED


def _clean(text: str) -> str:
    lines = []
    for line in text.splitlines():
        line = re.sub(r"^\s*(\|\s?)+", "", line)
        line = re.sub(r"^E\s+", "", line)
        lines.append(line.rstrip())
    return "\n".join(lines)


def extract_findings(test: dict[str, Any]) -> list[Finding]:
    """One finding per distinct failure Hypothesis reported in a test."""
    text = _clean(test["longrepr"])
    parts = re.split(r"^(?:AssertionError|[A-Za-z]+Error): ", text, flags=re.M)
    found: list[Finding] = []
    for part in parts[1:]:
        message = part.splitlines()[0].strip()
        m = _PROP_RE.match(message)
        props = m.group(1).split("/") if m else list(test["properties"])
        # one failure can name several properties, a paragraph each (lightspeed-stack)
        head = re.split(r"^(?:Failing test case|Falsifying example)", part, flags=re.M)[0]
        for more in re.findall(r"\n\n[ \t]*((?:[BVSC]\d+)(?:/[BVSC]\d+)*):", head):
            props += [p for p in more.split("/") if p not in props]
        repro = ""
        start = re.search(r"^(Failing test case|Falsifying example)", part, flags=re.M)
        if start:
            block = part[start.start() :]
            end = re.search(r"^You can reproduce.*$", block, flags=re.M)
            repro = block[: end.end()] if end else block[:3000]
            repro = "\n".join(ln for ln in repro.splitlines() if not ln.startswith("Explanation"))
        key = (message, tuple(props))
        if key not in {(f.message, tuple(f.properties)) for f in found}:
            found.append(Finding(props, message, test["nodeid"], repro.strip()))
    if not found:
        found.append(
            Finding(
                list(test["properties"]),
                text.strip().splitlines()[-1:][0] if text.strip() else "failed",
                test["nodeid"],
                "",
            )
        )
    return found


def heading(f: Finding) -> str:
    """A finding's title: ``V1/V3: message`` (the message often carries the prefix)."""
    props = "/".join(f.properties) or "?"
    return f.message if f.message.startswith(props) else f"{props}: {f.message}"
