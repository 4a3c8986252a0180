"""The targets ctxaudit checks, one registered :class:`~ctxaudit.targets.base.Target` each.

Adding a target is a new folder under ``ctxaudit/targets/`` that holds everything
specific to it (an object that satisfies :class:`~ctxaudit.targets.base.Target`,
subclassing :class:`~ctxaudit.targets.base.BaseTarget` for the defaults; its findings,
fixes, ``mutation.toml`` and pytest options), and one line in ``_REGISTERED`` below.
Nothing in the audit, the mutation runner, the command lines or the pytest setup names
a target: they ask this registry.

API (what the audit, the CLI and ``mutation/`` use)::

    from ctxaudit import targets

    targets.names()                      # ["gitreins", "ledger", "lightspeed-stack"]
    t = targets.get("gitreins")          # the Target (TargetError for an unknown name)
    r = t.resolve("0.16.0")              # Resolved(name, version, root, spec, copy_dir, ...)
    r.root, r.version, r.copy_dir        # what the mutation runner copies: root / copy_dir
    t.mutation                           # MutationScope(section, copy_dir, ...) or None
    t.peer_suite(r)                      # a folder with the target's own tests/, or None
    targets.parse("gitreins>=0.16.0")    # the audit's --target: [Described, ...]

A harness can also ship its own target as a package that declares it under the
``ctxaudit.targets`` entry-point group (``[project.entry-points."ctxaudit.targets"]``,
``name = "module:attribute"``): installed, it is registered after the built-in ones.

Entries are imported when first asked for, so importing this package (which every
``ctxaudit.targets.*`` module does, in lightspeed-stack's own environment too) stays
cheap.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path

from ctxaudit.fixes import Fix, load_fixes
from ctxaudit.targets.base import Described, RepoOption, Target, TargetError

__all__ = ["Described", "Target", "TargetError", "get", "names", "parse", "register"]

#: name -> "module:attribute" of its Target, in report order (this project's own ledger
#: last). One line per target.
_REGISTERED: dict[str, str] = {
    "gitreins": "ctxaudit.targets.gitreins.target:TARGET",
    "lightspeed-stack": "ctxaudit.targets.lightspeed.target:TARGET",
    "langchain": "ctxaudit.targets.langchain.target:TARGET",
    "openai-agents": "ctxaudit.targets.openai_agents.target:TARGET",
    "pydantic-ai": "ctxaudit.targets.pydantic_ai.target:TARGET",
    "google-adk": "ctxaudit.targets.google_adk.target:TARGET",
    "strands-agents": "ctxaudit.targets.strands_agents.target:TARGET",
    "ledger": "ctxaudit.targets.ledger.target:TARGET",
}
_loaded: dict[str, Target] = {}
#: the entry-point group a harness's own package registers its target under
ENTRY_POINT_GROUP = "ctxaudit.targets"
_plugins_read = False


def _read_plugins() -> None:
    """Register the installed packages' targets (``ctxaudit.targets`` entry points),
    once; a built-in name is never replaced by one."""
    global _plugins_read
    if _plugins_read:
        return
    _plugins_read = True
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        _REGISTERED.setdefault(ep.name, ep.value)


def register(target: Target | str, name: str | None = None) -> None:
    """Register a target: the object, or ``"module:attribute"`` (imported when first
    asked for) with its ``name``. A name registered again is replaced."""
    if isinstance(target, str):
        if name is None:
            raise ValueError("register('module:attribute') needs the target's name")
        _REGISTERED[name] = target
        _loaded.pop(name, None)
        return
    _REGISTERED[target.name] = f"<object {target.name}>"
    _loaded[target.name] = target


def unregister(name: str) -> None:
    """Forget a registered target (tests register toy targets)."""
    _REGISTERED.pop(name, None)
    _loaded.pop(name, None)


def names() -> list[str]:
    """The registered targets' names, in registration (report) order."""
    _read_plugins()
    return list(_REGISTERED)


def get(name: str) -> Target:
    """The target registered as ``name``; TargetError (one line) if there is none.

    ``get(name).resolve(spec)`` gives one version on disk as
    :class:`~ctxaudit.targets.base.Resolved`: ``root`` (the folder that holds its code),
    ``version``, ``copy_dir`` (the folder under ``root`` the mutation runner copies, None
    when the target is not mutated), ``spec`` (resolves to it again), ``commit`` and
    ``tree`` (the target module's own description); errors are TargetError.
    ``get(name).mutation`` is its :class:`~ctxaudit.targets.base.MutationScope` (section
    (its ``mutation.toml``), ``copy_dir``, the ``--<name>`` option, whether it has a
    peer suite), ``get(name).peer_suite(resolved)`` the folder with its own tests.
    """
    _read_plugins()
    if name not in _loaded:
        where = _REGISTERED.get(name)
        if where is None:
            raise TargetError(f"unknown target {name!r}; registered: {', '.join(names())}")
        module, _, attr = where.partition(":")
        target: Target = getattr(importlib.import_module(module), attr)
        _loaded[name] = target
    return _loaded[name]


def all_targets() -> list[Target]:
    return [get(name) for name in names()]


def fixes() -> dict[str, Fix]:
    """Every registered target's fixes (its ``fixes_package``), by finding id."""
    found: dict[str, Fix] = {}
    for target in all_targets():
        if target.fixes_package:
            found.update(load_fixes(target.fixes_package))
    return found


def mutated() -> list[Target]:
    """The registered targets the mutation runner mutates (they have a mutation scope)."""
    return [t for t in all_targets() if t.mutation is not None]


def properties() -> dict[str, dict[str, str]]:
    """target name -> its applicable properties (id -> short name)."""
    return {t.name: dict(t.properties) for t in all_targets()}


def repo_options() -> list[RepoOption]:
    """The registered targets' repository options, once each (command lines add them)."""
    found: dict[str, RepoOption] = {}
    for target in all_targets():
        if target.repo is not None:
            found.setdefault(target.repo.option, target.repo)
    return list(found.values())


def repos(given: Mapping[str, str | None]) -> dict[str, Path | None]:
    """target name -> the repository its specs resolve in, from the command line's
    values (``given``: an option's argparse destination -> its value) or the
    environment; targets without one are left out."""
    return {
        t.name: t.repo.value(given.get(t.repo.dest)) for t in all_targets() if t.repo is not None
    }


def parse(spec: str, repos: Mapping[str, Path | None] | None = None) -> list[Described]:
    """The target versions an audit ``--target`` spec names: the first registered target
    that claims the spec expands it (in its repository, from ``repos``, where it has
    one); a path that no target claims is explained by the first target that takes
    paths. Raises TargetError (one line)."""
    spec = spec.strip()
    where = repos or {}
    for target in all_targets():
        if target.claims(spec):
            return target.expand(spec, where.get(target.name))
    if "/" in spec or Path(spec).exists():
        for target in all_targets():
            if target.takes_paths:
                try:
                    return target.expand(spec, where.get(target.name))
                except TargetError as exc:  # say first that no target's tree is there
                    raise TargetError(
                        f"target {spec!r}: no registered target ({', '.join(names())}) claims "
                        f"this path; as a {target.name} tree: {exc}"
                    ) from None
    raise TargetError(f"target {spec!r}: expected {forms()}")


def forms() -> str:
    """Every registered target and the specs it takes (an installed package's target
    included, by its name where it documents no forms)."""
    return "; ".join(f"{t.name}: {t.spec_forms}" if t.spec_forms else t.name for t in all_targets())
