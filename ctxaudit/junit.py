"""The audit as JUnit XML (``audit --junit-xml FILE``), the report CI systems read.

One ``testsuite`` per target version, holding one ``testcase`` per property, per
known finding registered for or reproducing on the version, per new finding, and
one for the mutation gate when mutation ran. The three outcomes stay apart:

- holds: a passing testcase;
- the target breaks it: ``failure`` (a property, a reproducing known finding, a new
  finding, a failed gate). With a baseline, a property that fails only through
  findings the baseline accepts, and those findings, are ``skipped`` with that said
  (as pytest reports an expected failure);
- ctxaudit could not check it: ``error``; a property no test checked: ``skipped``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ctxaudit import atomic
from ctxaudit.outcomes import COULD_NOT_CHECK, FAILS, HOLDS, NOT_CHECKED


def document(
    reports: Sequence[Any],
    properties: Mapping[str, Mapping[str, str]],
    gates: Mapping[str, tuple[int, str]],
    accepted: Mapping[str, Sequence[str]] | None = None,
) -> ET.Element:
    """The ``testsuites`` element.

    ``reports``: the target reports (``target``, ``version``, ``verdicts``, ``known``,
    ``findings``, ``unchecked``); ``properties``: each target kind's property id -> short
    name; ``gates``: label -> (the mutation run's exit code, its line); ``accepted``:
    label -> the known findings a baseline accepts there (None: no baseline)."""
    root = ET.Element("testsuites", name="ctxaudit")
    for report in reports:
        label = f"{report.target}-{report.version}"
        suite = ET.SubElement(root, "testsuite", name=label)
        ok = set((accepted or {}).get(label, ()))
        for prop, verdict in report.verdicts.items():
            name = f"{prop} {properties.get(report.target, {}).get(prop, '')}".strip()
            case = _case(suite, f"{label}.properties", name)
            by = [k["id"] for k in report.known if k.get("affects") and _names(k, prop)]
            new = [f for f in report.findings if prop in f.properties]
            if verdict == FAILS and not new and by and set(by) <= ok:
                _child(case, "skipped", f"fails, accepted by the baseline: {', '.join(by)}")
            elif verdict == FAILS:
                why = [f"known finding {k}" for k in by] + [f.message for f in new]
                _child(case, "failure", f"{prop} fails: " + "; ".join(why or ["see findings.md"]))
            elif verdict == COULD_NOT_CHECK:
                why = [u["why"] for u in report.unchecked if prop in u["properties"]]
                _child(case, "error", "could not check: " + (why[0] if why else "see findings.md"))
            elif verdict == NOT_CHECKED:
                _child(case, "skipped", "not checked: no test of it applies to this version")
            else:
                assert verdict == HOLDS, verdict
        for k in report.known:
            if not (k.get("registered") or k.get("affects") or k.get("could_not_check")):
                continue
            case = _case(suite, f"{label}.known", f"{k['id']} ({k['property']})")
            if k.get("could_not_check"):
                _child(case, "error", f"could not check: {k['could_not_check']}")
            elif k.get("affects") and k["id"] in ok:
                _child(case, "skipped", f"reproduces, accepted by the baseline: {k['summary']}")
            elif k.get("affects"):
                _child(case, "failure", f"reproduces: {k['summary']}", k.get("repro", ""))
        for n, f in enumerate(report.findings, 1):
            case = _case(suite, f"{label}.new", f"new finding {n} ({'/'.join(f.properties)})")
            _child(case, "failure", f.message, f.reproduction or f.test)
        if label in gates:
            code, line = gates[label]
            case = _case(suite, f"{label}.mutation", "gate")
            if code == 1:
                _child(case, "failure", line)
            elif code != 0:
                _child(case, "error", line)
    for suite in root:
        cases = list(suite)
        for attr, tag in (("failures", "failure"), ("errors", "error"), ("skipped", "skipped")):
            suite.set(attr, str(sum(1 for c in cases if c.find(tag) is not None)))
        suite.set("tests", str(len(cases)))
    for attr in ("tests", "failures", "errors", "skipped"):
        root.set(attr, str(sum(int(s.get(attr, "0")) for s in root)))
    return root


def write(path: Path, root: ET.Element) -> Path:
    ET.indent(root)
    text = ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
    return atomic.write_text(path, text)


def _names(known: Mapping[str, Any], prop: str) -> bool:
    return prop in str(known.get("property", "")).split("/")


def _case(suite: ET.Element, classname: str, name: str) -> ET.Element:
    return ET.SubElement(suite, "testcase", classname=classname, name=name)


def _child(case: ET.Element, tag: str, message: str, text: str = "") -> None:
    element = ET.SubElement(case, tag, message=message.splitlines()[0] if message else tag)
    if text or "\n" in message:
        element.text = text or message
