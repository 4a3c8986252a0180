"""Peer-only kills the SPEC does not ground: ``mutation/outside_spec.toml``.

The peer comparison (mutation/README.md, "Peer comparison") lists the mutants a target's
own tests kill and ctxaudit's suite does not. Each one is either against a SPEC property
(the suite should kill it: a gap to close) or outside the SPEC (the peer checks something
no property speaks about: message wording, a constant of its own). The second kind is
listed in ``outside_spec.toml``, each with the reason, reviewed like code, and matched by
mutant id as ``equivalent.toml`` is; a peer-only kill that is not listed is reported as
against the SPEC.
"""

from __future__ import annotations

from pathlib import Path

from mutation.reviewed import load_reviewed

OUTSIDE_SPEC_FILE = Path(__file__).resolve().parent / "outside_spec.toml"


def load_outside_spec(path: Path = OUTSIDE_SPEC_FILE, target: str | None = None) -> dict[str, str]:
    """id -> reason of the reviewed peer-only kills outside the SPEC (for ``target``)."""
    found = load_reviewed(path, "outside_spec", target, "a catalogued mutant is a SPEC property's")
    return {i: " ".join(reason.split()) for i, reason in found.items()}


def split(peer_only: list[str], outside: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """The peer-only kills against a SPEC property (not listed), and those listed as
    outside the SPEC with their reasons."""
    against = [i for i in peer_only if i not in outside]
    return against, {i: outside[i] for i in peer_only if i in outside}
