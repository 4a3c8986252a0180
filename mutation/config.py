"""Per-target configuration: scope, tests, exclusions, property map.

Each target keeps its own in its folder (``ctxaudit/targets/<target>/mutation.toml``,
named by its :class:`~ctxaudit.targets.base.MutationScope`), as one TOML table named
after the target, ``[<name>]``:

- ``package`` (the folder copied and mutated), ``tests`` (the suites run against each
  mutant: paths under ctxaudit's root, or under the file's own folder written
  ``{here}/...``, for a target that ships its suites in its own package, or
  ``{concerns}/...``, ctxaudit's shared concern suites, for one whose adapters declare
  them: ``ctxaudit/targets/concern_suites``),
  ``pytest_args``; ``files[]``: ``path`` (a glob) and ``functions``;
- ``files[].functions`` and ``exclude[].function`` are fnmatch globs over the
  qualified name inside the file (``"EvalCap.record_llm_call"``, ``"_parse_time"``);
- ``exclude[].when`` (optional): the exclusion applies only to a function whose source
  text matches this regex (re.search, multiline), so one entry reads right for
  versions that hold different code under the same name;
- ``exclude[].unreferenced = true``: only in a version whose source never names the
  function outside its own def (dead code there); ``exclude[].absent = PATH``: only in
  a version whose source folder has no file PATH (what reaches the function is
  missing);
- ``exclude_statements[]``: a statement of a matching function whose first line
  (stripped) matches the regex is not mutated, nor anything nested in it; its
  function is a glob or a list of globs (the same code under several names);
- ``properties[]``: which properties speak about which function (the first matching
  ``match`` wins), used to name "the property that should have caught" a survivor
  that is not in the catalogue.

Every exclusion carries its ``reason``; the files are reviewed like code.
"""

from __future__ import annotations

import fnmatch
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxaudit import own_tests
from ctxaudit.own_tests import PeerSuite as PeerSuite  # re-exported: the declaration's type

ISOLATIONS = ("fork", "process")
#: ctxaudit's pytest setup, given to every run of a target's suite (one that lives
#: outside this repository has no conftest.py that loads it)
SUITE_PLUGIN = ("-p", "ctxaudit.pytest_plugin")


class ConfigError(Exception):
    """The configuration is unusable. Its message is one line."""


@dataclass(frozen=True)
class StatementExclusion:
    function: str
    pattern: re.Pattern[str]
    reason: str


@dataclass(frozen=True)
class FunctionExclusion:
    function: str
    reason: str
    #: the exclusion applies only to a function whose source (its whole text, from
    #: ``def`` on) matches this regex; None: always. It reads as data what one version
    #: of a target does with a function that another version does differently.
    when: re.Pattern[str] | None = None
    #: the exclusion applies only to a version whose source names the function nowhere
    #: but in its own ``def`` line (:func:`unreferenced`): code nothing calls there
    unreferenced: bool = False
    #: the exclusion applies only to a version whose source folder has no such file
    #: (a path relative to it): what reaches the function there is missing
    absent: str | None = None

    @property
    def per_version(self) -> bool:
        return self.unreferenced or self.absent is not None

    def applies(
        self, function: str, source: str | None, dead: frozenset[str] = frozenset()
    ) -> bool:
        """Whether it leaves out ``function``; ``dead``: the functions this version
        leaves out (:meth:`TargetConfig.dead_functions`). Without the source (a caller
        that has none), a conditional exclusion does not apply: the function counts as
        in scope."""
        if not fnmatch.fnmatchcase(function, self.function):
            return False
        if self.per_version and function not in dead:
            return False
        return self.when is None or (source is not None and self.when.search(source) is not None)


def unreferenced(root: Path, names: Iterable[str]) -> frozenset[str]:
    """Of ``names``, those the Python source under ``root`` mentions nowhere but in their
    own ``def`` line: no call, import, reference, comment or docstring names them."""
    pending = sorted(set(names))
    if not pending:
        return frozenset()
    mention = re.compile(r"\b(" + "|".join(map(re.escape, pending)) + r")\b")
    definition = re.compile(r"\s*(?:async\s+)?def\s+(\w+)\s*\(")
    used: set[str] = set()
    for path in sorted(root.rglob("*.py")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            defined = definition.match(line)
            for m in mention.finditer(line):
                if not (
                    defined and defined.group(1) == m.group(1) and m.start() == defined.start(1)
                ):
                    used.add(m.group(1))
    return frozenset(pending) - used


@dataclass(frozen=True)
class TargetConfig:
    name: str
    package: str
    tests: tuple[str, ...]
    pytest_args: tuple[str, ...]
    files: tuple[tuple[str, tuple[str, ...]], ...]
    exclude: tuple[FunctionExclusion, ...] = ()
    exclude_statements: tuple[StatementExclusion, ...] = ()
    properties: tuple[tuple[str, tuple[str, ...]], ...] = ()
    preload: tuple[str, ...] = ()
    quiet_calls: tuple[str, ...] | None = None
    #: test node ids (prefixes) not run against mutants, each with a reason
    deselect: tuple[tuple[str, str], ...] = ()
    #: (function globs, test node id prefixes, reason): tests that reach these
    #: functions in a subprocess, where the baseline's function coverage cannot see it
    subprocess_tests: tuple[tuple[tuple[str, ...], tuple[str, ...], str], ...] = ()
    peer: PeerSuite | None = None
    #: the folder under the target's root that holds its top-level modules ("" = the root)
    source_root: str = ""
    #: how mutants are kept apart: ``fork`` (a child per mutant) or ``process`` (one
    #: after another in the worker process, for targets that run threads and an event
    #: loop a fork would not carry over; a mutant that hangs costs a worker restart)
    isolation: str = "fork"
    #: the largest share of ``other`` mutants a run takes, whatever it is asked for
    #: (a target whose every mutant costs a run of a real service)
    other_sample_max: float = 1.0
    extra: dict[str, object] = field(default_factory=dict)

    def source_files(self, root: Path) -> list[str]:
        """Relative paths (posix) of the files in scope under ``root``, sorted."""
        found: set[str] = set()
        for pattern, _ in self.files:
            for p in root.glob(pattern):
                if p.is_file() and p.suffix == ".py":
                    found.add(p.relative_to(root).as_posix())
        return sorted(found)

    def in_scope(
        self,
        path: str,
        function: str,
        source: str | None = None,
        dead: frozenset[str] = frozenset(),
    ) -> bool:
        """Whether ``function`` of ``path`` is mutated; ``source`` is the function's text
        (``module.code_for_node(node)``), which conditional exclusions (``when``) read,
        ``dead`` the version's unreferenced functions (:meth:`dead_functions`)."""
        return (
            self.listed(path, function) and self.excluded_function(function, source, dead) is None
        )

    def listed(self, path: str, function: str) -> bool:
        """Whether ``function`` of ``path`` is in the files' scope, before exclusions."""
        return any(
            fnmatch.fnmatchcase(path, pat.replace("**/", "*").replace("**", "*"))
            and any(fnmatch.fnmatchcase(function, f) for f in funcs)
            for pat, funcs in self.files
        )

    def excluded_function(
        self, function: str, source: str | None = None, dead: frozenset[str] = frozenset()
    ) -> FunctionExclusion | None:
        return next((e for e in self.exclude if e.applies(function, source, dead)), None)

    def dead_functions(self, root: Path) -> frozenset[str]:
        """The functions per-version exclusions leave out of the source under ``root``
        (the version's source folder): those ``unreferenced`` ones it never calls, and
        those whose ``absent`` file it lacks."""
        dead = unreferenced(root, [e.function for e in self.exclude if e.unreferenced])
        lacking = {e.function for e in self.exclude if e.absent and not (root / e.absent).exists()}
        return dead | lacking

    def properties_for(self, path: str, function: str) -> tuple[str, ...]:
        key = f"{path}:{function}"
        for pattern, props in self.properties:
            if fnmatch.fnmatchcase(key, pattern) or pattern == "*":
                return props
        return ()


def load_targets(path: Path) -> dict[str, TargetConfig]:
    """The targets' tables of one configuration file, by name."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from None
    out = {}
    for name, t in data.items():
        try:
            out[name] = TargetConfig(
                name=name,
                package=t["package"],
                tests=tuple(_here(s, path) for s in t["tests"]),
                pytest_args=(*SUITE_PLUGIN, *t.get("pytest_args", ())),
                files=tuple((f["path"], tuple(f.get("functions", ["*"]))) for f in t["files"]),
                exclude=tuple(
                    FunctionExclusion(
                        e["function"],
                        _reason(e, name),
                        re.compile(e["when"], re.M) if "when" in e else None,
                        _unreferenced(e, name),
                        _absent(e, name),
                    )
                    for e in t.get("exclude", ())
                ),
                exclude_statements=tuple(
                    StatementExclusion(f, re.compile(e["statement"]), _reason(e, name))
                    for e in t.get("exclude_statements", ())
                    for f in _names(e["function"])
                ),
                properties=tuple(
                    (p["match"], tuple(p["properties"])) for p in t.get("properties", ())
                ),
                preload=tuple(t.get("preload", ())),
                quiet_calls=tuple(t["quiet_calls"]) if "quiet_calls" in t else None,
                deselect=tuple((d["test"], _reason(d, name)) for d in t.get("deselect", ())),
                subprocess_tests=tuple(
                    (tuple(d["functions"]), tuple(d["tests"]), _reason(d, name))
                    for d in t.get("subprocess_tests", ())
                ),
                peer=_peer(t["peer"], name) if "peer" in t else None,
                source_root=str(t.get("source_root", "")),
                isolation=str(t.get("isolation", "fork")),
                other_sample_max=float(t.get("other_sample_max", 1.0)),
            )
            if out[name].isolation not in ISOLATIONS:
                raise ConfigError(
                    f"{path}: target {name!r}: isolation must be one of {', '.join(ISOLATIONS)}"
                )
        except (KeyError, TypeError, re.error) as exc:
            raise ConfigError(f"{path}: target {name!r}: bad or missing {exc}") from None
    return out


def _peer(p: dict[str, Any], target: str) -> PeerSuite:
    try:
        return own_tests.parse(p, target)
    except own_tests.OwnTestsError as exc:
        raise ConfigError(str(exc)) from None


def _names(function: str | list[str]) -> list[str]:
    """An exclusion's ``function``: one glob, or a list of globs (the same code under
    another name in other versions of the target) that each get the same rule."""
    if isinstance(function, str):
        return [function]
    if isinstance(function, list) and function and all(isinstance(f, str) for f in function):
        return function
    raise TypeError("function")


def _unreferenced(entry: dict[str, Any], target: str) -> bool:
    value = entry.get("unreferenced", False)
    if not isinstance(value, bool):
        raise ConfigError(
            f"mutation.toml: [{target}] exclusion {entry}: unreferenced is true or false"
        )
    if value and not re.fullmatch(r"\w+", str(entry["function"])):
        raise ConfigError(
            f"mutation.toml: [{target}] exclusion {entry}: an unreferenced exclusion names "
            "one function, not a pattern"
        )
    return value


def _absent(entry: dict[str, Any], target: str) -> str | None:
    value = entry.get("absent")
    if value is None:
        return None
    if not isinstance(value, str) or not value or not re.fullmatch(r"\w+", str(entry["function"])):
        raise ConfigError(
            f"mutation.toml: [{target}] exclusion {entry}: absent is a file's path, on an "
            "exclusion of one function, not a pattern"
        )
    return value


def _reason(entry: dict[str, str], target: str) -> str:
    reason = str(entry.get("reason", "")).strip()
    if not reason:
        raise ConfigError(f"mutation.toml: [{target}] exclusion {entry} has no reason")
    return reason


def _here(test: str, config: Path) -> str:
    """A ``tests`` entry with ``{here}`` read as the configuration file's folder, and
    ``{concerns}`` as the folder of ctxaudit's shared concern suites (a target whose
    adapters declare them writes no suite of its own)."""
    from ctxaudit.targets import concern_suites

    test = test.replace("{concerns}", str(concern_suites.HERE))
    return test.replace("{here}", str(config.resolve().parent))


def target_config(name: str) -> TargetConfig:
    """The configuration of the registered target ``name`` (its ``mutation.toml``)."""
    from ctxaudit import targets

    try:
        scope = targets.get(name).mutation
    except targets.TargetError as exc:
        raise ConfigError(str(exc)) from None
    if scope is None or scope.config is None:
        raise ConfigError(f"target {name!r} is not mutated (it has no mutation scope)")
    found = load_targets(scope.config)
    if scope.section not in found:
        raise ConfigError(f"{scope.config}: no [{scope.section}] table")
    return found[scope.section]
