"""The reviewed lists of mutants: the equivalent ones (``mutation/equivalent.toml``) and
those outside the specification (``mutation/outside_spec.toml``), each entry a target,
a mutant id and the reviewer's reason.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from mutation.engine import REPO, MutationError

EQUIVALENT_FILE = REPO / "mutation" / "equivalent.toml"


def load_reviewed(path: Path, table: str, target: str | None, catalogued: str) -> dict[str, str]:
    """id -> reason of a reviewed list of mutants (``[[table]]`` entries with target, id
    and reason; ``catalogued``: why a catalogued mutant cannot be listed)."""
    if not path.exists():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise MutationError(f"{path}: {exc}") from None
    out = {}
    for e in data.get(table, []):
        if not str(e.get("reason", "")).strip() or not e.get("id") or not e.get("target"):
            raise MutationError(f"{path}: entry {e.get('id', '?')} needs target, id and a reason")
        if e["id"].startswith("catalogue:"):
            raise MutationError(f"{path}: {e['id']}: {catalogued}")
        if target is None or e["target"] == target:
            out[e["id"]] = str(e["reason"]).strip()
    return out


def load_equivalents(path: Path = EQUIVALENT_FILE, target: str | None = None) -> dict[str, str]:
    """id -> reason of the reviewed equivalent mutants."""
    return load_reviewed(path, "equivalent", target, "a catalogued mutant cannot be equivalent")
