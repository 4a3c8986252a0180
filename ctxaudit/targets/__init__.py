"""The targets ctxaudit checks, one registered :class:`~ctxaudit.targets.base.Target` each.

Adding a target is a new module (or folder) under ``ctxaudit/targets/`` with an object
that satisfies :class:`~ctxaudit.targets.base.Target` (subclass
:class:`~ctxaudit.targets.base.BaseTarget` for the defaults), and one line in
``_REGISTERED`` below. Nothing in the audit names a target.

API (what the audit, the CLI and ``mutation/`` use)::

    from ctxaudit import targets

    targets.names()                      # ["gitreins", "ledger", "lightspeed-stack"]
    t = targets.get("gitreins")          # the Target (TargetError for an unknown name)
    r = t.resolve("0.16.0")              # Resolved(name, version, root, spec, copy_dir, ...)
    r.root, r.version, r.copy_dir        # what the mutation runner copies: root / copy_dir
    t.mutation                           # MutationScope(section, copy_dir, ...) or None
    t.peer_suite(r)                      # a folder with the target's own tests/, or None
    targets.parse("gitreins>=0.16.0")    # the audit's --target: [Described, ...]

Entries are imported when first asked for, so importing this package (which every
``ctxaudit.targets.*`` module does, in lightspeed-stack's own environment too) stays
cheap.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from ctxaudit.targets.base import Described, Target, TargetError

__all__ = ["Described", "Target", "TargetError", "get", "names", "parse", "register"]

#: name -> "module:attribute" of its Target, in report order. One line per target.
_REGISTERED: dict[str, str] = {
    "gitreins": "ctxaudit.targets.gitreins_target:TARGET",
    "ledger": "ctxaudit.targets.ledger_target:TARGET",
    "lightspeed-stack": "ctxaudit.targets.lightspeed_target:TARGET",
}
_loaded: dict[str, Target] = {}


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
    return list(_REGISTERED)


def get(name: str) -> Target:
    """The target registered as ``name``; TargetError (one line) if there is none.

    ``get(name).resolve(spec)`` gives one version on disk as
    :class:`~ctxaudit.targets.base.Resolved`: ``root`` (the folder that holds its code),
    ``version``, ``copy_dir`` (the folder under ``root`` the mutation runner copies, None
    when the target is not mutated), ``spec`` (resolves to it again), ``commit`` and
    ``tree`` (the target module's own description); errors are TargetError.
    ``get(name).mutation`` is its :class:`~ctxaudit.targets.base.MutationScope` (section
    in ``mutation/targets.toml``, ``copy_dir``, the ``--<name>`` option, whether it has a
    peer suite), ``get(name).peer_suite(resolved)`` the folder with its own tests.
    """
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


def properties() -> dict[str, dict[str, str]]:
    """target name -> its applicable properties (id -> short name)."""
    return {t.name: dict(t.properties) for t in all_targets()}


def parse(spec: str, repo: Path | None = None) -> list[Described]:
    """The target versions an audit ``--target`` spec names: the first registered target
    that claims the spec expands it; a path that no target claims is explained by the
    first target that takes paths. Raises TargetError (one line)."""
    spec = spec.strip()
    for target in all_targets():
        if target.claims(spec):
            return target.expand(spec, repo)
    if "/" in spec or Path(spec).exists():
        for target in all_targets():
            if target.takes_paths:
                return target.expand(spec, repo)
    forms = [t.spec_forms for t in all_targets() if t.spec_forms]
    raise TargetError(f"target {spec!r}: expected {', '.join(forms)}")
