"""Peer-only kills the SPEC does not ground: ``mutation/outside_spec.toml``.

The peer comparison (mutation/README.md, "Peer comparison") lists the mutants gitreins'
own tests kill and ctxaudit's suite does not. Each one is either against a SPEC property
(the suite should kill it: a gap to close) or outside the SPEC (the peer checks something
no property speaks about: message wording, a constant of its own). The second kind is
listed in ``outside_spec.toml``, each with the reason, reviewed like code, and matched by
mutant id as ``equivalent.toml`` is; a peer-only kill that is not listed is reported as
against the SPEC.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from mutation.engine import MutationError

OUTSIDE_SPEC_FILE = Path(__file__).resolve().parent / "outside_spec.toml"


def load_outside_spec(path: Path = OUTSIDE_SPEC_FILE, target: str | None = None) -> dict[str, str]:
    """id -> reason of the reviewed peer-only kills outside the SPEC (for ``target``)."""
    if not path.exists():
        return {}
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise MutationError(f"{path}: {exc}") from None
    out = {}
    for e in data.get("outside_spec", []):
        if not str(e.get("reason", "")).strip() or not e.get("id") or not e.get("target"):
            raise MutationError(f"{path}: entry {e.get('id', '?')} needs target, id and a reason")
        if e["id"].startswith("catalogue:"):
            raise MutationError(f"{path}: {e['id']}: a catalogued mutant is a SPEC property's")
        if target is None or e["target"] == target:
            out[e["id"]] = " ".join(str(e["reason"]).split())
    return out


def split(peer_only: list[str], outside: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """The peer-only kills against a SPEC property (not listed), and those listed as
    outside the SPEC with their reasons."""
    against = [i for i in peer_only if i not in outside]
    return against, {i: outside[i] for i in peer_only if i in outside}
