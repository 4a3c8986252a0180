"""The environment a verdict was made in: the Python and the test libraries a suite
imported, and the variables that decide what it imports.

A property's verdict depends on them, not only on the target's code and ctxaudit's
suites: Hypothesis draws other examples in another release (issue #47: a ledger verdict
changed with the Hypothesis a ``PYTHONPATH`` put first). So the step cache keys on them
(:func:`fingerprint`), a suite process reports what it imported (:func:`imported`, from
``ctxaudit.pytest_results``), a report says when that is not what ctxaudit pins
(:func:`unpinned`), and its rerun commands carry the variables that made it so
(:func:`assignments`).
"""

from __future__ import annotations

import platform
import shlex
from collections.abc import Mapping
from importlib import metadata

#: the libraries whose release changes what a suite draws or how it runs
LIBRARIES = ("hypothesis", "pytest")
#: the variables that change which of them a Python process imports
IMPORT_VARIABLES = ("PYTHONPATH", "PYTHONHOME", "PYTHONNOUSERSITE", "PYTHONSAFEPATH")


def imported() -> dict[str, str]:
    """The Python and the test libraries as this process imports them (their modules'
    own versions: what a ``PYTHONPATH`` put first is what runs, whatever is installed)."""
    found = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            module = __import__(name)
        except ImportError:
            found[name] = "not importable"
        else:
            found[name] = str(getattr(module, "__version__", "unknown"))
    return found


def variables(environ: Mapping[str, str]) -> dict[str, str]:
    """The import variables set (not empty) in ``environ``."""
    return {name: environ[name] for name in IMPORT_VARIABLES if environ.get(name)}


def inherited(environ: Mapping[str, str], caller: Mapping[str, str]) -> dict[str, str]:
    """The import variables set in ``environ`` (a suite process's) with the value they
    have in ``caller`` (the audit's): what the user's environment decided. Those a target
    sets itself (a library target's ``PYTHONPATH`` of its cached environment, its
    ``PYTHONNOUSERSITE``) are the target's route: its reruns take the same route and
    set them again, and their values are paths of this machine, not of the verdict."""
    return {k: v for k, v in variables(environ).items() if caller.get(k) == v}


def fingerprint(environ: Mapping[str, str]) -> dict[str, object]:
    """What a cached verdict must have been made under: this process's Python and test
    libraries, and the import variables a suite process inherits from ``environ``."""
    return {"imported": imported(), "variables": variables(environ)}


def pinned() -> dict[str, str]:
    """The versions of :data:`LIBRARIES` the installed ctxaudit requires (``==`` pins)."""
    pins: dict[str, str] = {}
    try:
        requires = metadata.requires("ctxaudit") or []
    except metadata.PackageNotFoundError:
        return pins
    for requirement in requires:
        name, sep, version = requirement.partition("==")
        name = name.strip().lower()
        if sep and name in LIBRARIES and ";" not in version:
            pins[name] = version.strip()
    return pins


def unpinned(seen: Mapping[str, str]) -> list[str]:
    """Each library in ``seen`` (a suite process's :func:`imported`) at another version
    than ctxaudit pins, as ``name version (ctxaudit pins pin)``."""
    pins = pinned()
    return [
        f"{name} {seen[name]} (ctxaudit pins {pins[name]})"
        for name in LIBRARIES
        if name in seen and name in pins and seen[name] != pins[name]
    ]


def assignments(recorded: Mapping[str, str]) -> str:
    """``NAME=value`` words (shell-quoted) for the import variables a report recorded,
    to lead a command that must run as that report's suites ran; empty when none."""
    return " ".join(f"{name}={shlex.quote(value)}" for name, value in recorded.items())
