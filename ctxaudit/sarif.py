"""The audit's findings as SARIF 2.1.0 (``audit --sarif FILE``), for code-scanning views.

One run, ctxaudit the tool, one rule per property of the audited targets. Each
finding that fails the gate is a result whose rule is its property (the first, for a
finding that breaks several), at level ``error``:

- a new finding: its message and the test that found it; where in the target it
  lives is not known;
- a known finding that reproduces: at the file and line of the target that its fix
  changes (the failing write or comparison), where the fix has a form for the tree.

A known finding a baseline accepts is a result too, with an external suppression that
carries the baseline's reason, as SARIF records an accepted result.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ctxaudit import atomic

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"

#: where a known finding lives in a version: (path relative to the tree, line), or None
Locate = Callable[[Any, str], tuple[str, int] | None]


def document(
    reports: Sequence[Any],
    properties: Mapping[str, Mapping[str, str]],
    locate: Locate,
    accepted: Mapping[str, Mapping[str, str]] | None = None,
) -> dict[str, Any]:
    """The SARIF log. ``reports``: the target reports; ``properties``: each target
    kind's property id -> short name; ``locate(report, finding_id)``: where a known
    finding lives in that version; ``accepted``: label -> {finding id: the baseline's
    reason} (None: no baseline)."""
    rules: dict[str, dict[str, Any]] = {}
    for kind in sorted(properties):
        for prop, name in properties[kind].items():
            rules.setdefault(prop, {"id": prop, "name": name or prop,
                                    "shortDescription": {"text": f"{prop}: {name}"}})  # fmt: skip
    results: list[dict[str, Any]] = []
    for report in reports:
        label = f"{report.target}-{report.version}"
        ok = (accepted or {}).get(label, {})
        for k in report.known:
            if not k.get("affects"):
                continue
            result = _result(
                _first(k["property"]),
                f"{k['id']} reproduces on {label}: {k['summary']}",
                {"target": label, "finding": k["id"], "reproduction": k.get("repro", "")},
            )
            where = locate(report, k["id"])
            if where is not None:
                result["locations"] = [_location(*where)]
            if k["id"] in ok:
                result["suppressions"] = [
                    {"kind": "external", "justification": ok[k["id"]] or "in the baseline"}
                ]
            results.append(result)
        for f in report.findings:
            results.append(
                _result(
                    f.properties[0] if f.properties else "",
                    f"new finding on {label}: {f.message}",
                    {"target": label, "test": f.test},
                )
            )
    for r in results:
        rules.setdefault(r["ruleId"], {"id": r["ruleId"], "name": r["ruleId"]})
    driver = {"name": "ctxaudit", "rules": sorted(rules.values(), key=lambda r: r["id"])}
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "results": results}],
    }


def write(path: Path, doc: Mapping[str, Any]) -> Path:
    return atomic.write_text(path, json.dumps(doc, indent=2) + "\n")


def edit_location(root: Path, path: str, old: str) -> tuple[str, int] | None:
    """The line where ``old`` (an edit's text, which may start with a newline) starts in
    ``root / path``; None when the file or the text is not there."""
    try:
        text = (root / path).read_text(encoding="utf-8")
    except OSError:
        return None
    at = text.find(old)
    if at < 0:
        return None
    at += len(old) - len(old.lstrip("\n"))
    return path, text.count("\n", 0, at) + 1


def _first(prop: str) -> str:
    return prop.split("/")[0]


def _result(rule: str, message: str, props: Mapping[str, str]) -> dict[str, Any]:
    return {
        "ruleId": rule,
        "level": "error",
        "message": {"text": message},
        "properties": dict(props),
    }


def _location(path: str, line: int) -> dict[str, Any]:
    return {
        "physicalLocation": {
            "artifactLocation": {"uri": path},
            "region": {"startLine": line},
        }
    }
