"""The step cache's values read back from JSON, every field checked against its type:
a property phase's :class:`TargetReport` (its fields), a mutation run (its exit code, a
verdict, and its output), and the relative paths of an entry's files. What cannot be
trusted raises :class:`InvalidEntry` (one line: why)."""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from pathlib import PurePosixPath
from typing import Any

from ctxaudit.target_report import TargetReport

#: the exit codes of ``python -m mutation`` that are a verdict (gate passes, fails)
VERDICT_CODES = (0, 1)


class InvalidEntry(ValueError):
    """A step cache entry that cannot be trusted. One line: why."""


def _from_json(hint: Any, value: Any, where: str) -> Any:
    """``value`` (parsed JSON) as the type ``hint`` says: dataclasses rebuilt from their
    fields, every other value checked. Raises :class:`InvalidEntry` naming ``where``."""
    if hint is Any:
        return value
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        for option in typing.get_args(hint):
            try:
                return _from_json(option, value, where)
            except InvalidEntry:
                continue
        raise InvalidEntry(f"{where} is {shown(value)}, not {hint}")
    if hint is type(None):
        if value is None:
            return None
    elif hint is bool:
        if isinstance(value, bool):
            return value
    elif hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif hint is float:
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if number and math.isfinite(value):
            return float(value)
    elif hint is str:
        if isinstance(value, str):
            return value
    elif origin is list:
        if isinstance(value, list):
            (item,) = typing.get_args(hint) or (Any,)
            return [_from_json(item, v, f"{where}[{i}]") for i, v in enumerate(value)]
    elif origin is dict:
        if isinstance(value, dict):
            _k, item = typing.get_args(hint) or (str, Any)
            return {k: _from_json(item, v, f"{where}.{k}") for k, v in value.items()}
    elif dataclasses.is_dataclass(hint) and isinstance(hint, type):
        if isinstance(value, dict):
            return _dataclass_from_json(hint, value, where)
    else:
        raise InvalidEntry(f"{where}: cannot read a {hint} from JSON")
    raise InvalidEntry(f"{where} is {shown(value)}, not {getattr(hint, '__name__', hint)}")


def shown(value: Any) -> str:
    """``value`` as JSON, cut to 40 characters (a one-line error names it)."""
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _dataclass_from_json(cls: type, value: dict[str, Any], where: str) -> Any:
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(value) - set(fields))
    if unknown:
        raise InvalidEntry(f"{where}: unknown fields {unknown}")
    required = [
        n
        for n, f in fields.items()
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    missing = [n for n in required if n not in value]
    if missing:
        raise InvalidEntry(f"{where}: missing fields {missing}")
    kwargs = {n: _from_json(hints[n], v, f"{where}.{n}") for n, v in value.items()}
    return cls(**kwargs)


def report_to_json(report: TargetReport) -> dict[str, Any]:
    """A property phase's report as JSON (its fields)."""
    return dataclasses.asdict(report)


def report_from_json(value: Any) -> TargetReport:
    """The report :func:`report_to_json` made, every field checked against its type."""
    if not isinstance(value, dict):
        raise InvalidEntry(f"report is {shown(value)}, not an object")
    report: TargetReport = _from_json(TargetReport, value, "report")
    return report


def mutation_from_json(value: Any) -> tuple[int, str]:
    """A stored mutation run: its exit code (a verdict: 0 or 1) and its output."""
    if not isinstance(value, dict) or set(value) != {"code", "output"}:
        raise InvalidEntry(f"mutation value is {shown(value)}, not {{code, output}}")
    code, output = value["code"], value["output"]
    if not (isinstance(code, int) and not isinstance(code, bool) and code in VERDICT_CODES):
        raise InvalidEntry(f"mutation exit code {shown(code)} is not a verdict (0 or 1)")
    if not isinstance(output, str):
        raise InvalidEntry("mutation output is not text")
    return code, output


def entry_path_error(rel: Any) -> str | None:
    """Why the relative path ``rel`` of an entry's file may not be written under a
    report folder (None: it may): absolute, with ``..``, or not a plain path."""
    if not isinstance(rel, str) or not rel or "\0" in rel or "\\" in rel:
        return f"file name {shown(rel)} is not a plain relative path"
    pure = PurePosixPath(rel)
    if pure.is_absolute() or rel.startswith("~"):
        return f"file {rel!r} is an absolute path"
    if ".." in pure.parts:
        return f"file {rel!r} climbs out with '..'"
    return None
