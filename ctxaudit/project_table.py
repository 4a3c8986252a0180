"""A project's ``[tool.ctxaudit]`` table (its ``pyproject.toml``), as the maintainers'
pytest plugin (``ctxaudit.pytest_ctxaudit``) reads it: a misspelt key or a value of the
wrong type is one usage error, never a key silently ignored.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest


def project_table(rootdir: Path) -> dict[str, Any]:
    """``[tool.ctxaudit]`` of the project's pyproject.toml (empty when there is none)."""
    path = rootdir / "pyproject.toml"
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise pytest.UsageError(f"ctxaudit: {path}: {exc}") from None
    table = data.get("tool", {}).get("ctxaudit", {})
    if not isinstance(table, dict):
        raise pytest.UsageError(f"ctxaudit: {path}: [tool.ctxaudit] must be a table")
    why = table_problem(table)
    if why:
        raise pytest.UsageError(f"ctxaudit: {path}: [tool.ctxaudit] {why}")
    return table


#: the keys of [tool.ctxaudit] and what each holds
KEYS = {
    "target": "a target spec or a list of them",
    "baseline": "a path",
    "options": "a table of audit options (name = value)",
}


def table_problem(table: dict[str, Any]) -> str:
    """Why ``[tool.ctxaudit]`` cannot be used ("" when it can): an unknown key (a
    misspelt one would be ignored, and the run would check nothing), or a value of
    another type than its key holds."""
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        return f"has unknown key(s) {', '.join(unknown)} (known: {', '.join(KEYS)})"
    target = table.get("target", [])
    targets = [target] if isinstance(target, str) else target
    if not isinstance(targets, list) or not all(isinstance(t, str) and t.strip() for t in targets):
        return f"target must be {KEYS['target']} (not empty), not {target!r}"
    baseline = table.get("baseline", "")
    if not isinstance(baseline, str):
        return f"baseline must be {KEYS['baseline']}, not {baseline!r}"
    options = table.get("options", {})
    if not isinstance(options, dict) or not all(
        isinstance(v, str | int | float | bool) for v in options.values()
    ):
        return f"options must be {KEYS['options']}, not {options!r}"
    return ""
