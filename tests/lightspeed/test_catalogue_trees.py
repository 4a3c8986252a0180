"""The lightspeed-stack catalogue on every audited tree: each entry applies, or is not
for the tree by its ``where``; none is an error (mutation/catalogue.py's docstring).

Each tree is read twice: as it is, and with every known finding's fix applied (what
``mutation run --fix all`` mutates: some entries stand for a fix's write, and ``where``
leaves them out of the trees without it). The catalogue part of
``mutation.engine.build_plan`` is done textually, on the entry's file alone (the whole
plan generates every mutant of the scope, about a minute a tree): ``where``, then
``catalogue.apply``, as on a registered version, where an entry that should apply and
does not is an error. A table entry x tree is printed (``ok``: applies; ``-``: not for
this tree by ``where``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mutation import catalogue
from mutation.config import target_config

pytestmark = pytest.mark.lightspeed

TARGET = "lightspeed-stack"
TREES = {
    "0.6.0": f"{TARGET}==0.6.0",
    "0.6.1": f"{TARGET}==0.6.1",
    "0.6.2": f"{TARGET}==0.6.2",
    "0.7.0rc1": f"{TARGET}==0.7.0rc1",
    "release/0.6": f"{TARGET}@release/0.6",
    "release/0.7": f"{TARGET}@release/0.7",
    "main": f"{TARGET}@main",
}


def catalogue_part(root: Path) -> dict[str, str]:
    """Entry id -> ``ok`` (applies) or ``-`` (not for the tree by ``where``) on the
    source tree ``root`` (its ``src/``); an entry that does neither raises."""
    scope = set(target_config(TARGET).source_files(root))
    got: dict[str, str] = {}
    for entry in catalogue.load(target=TARGET):
        where = root / entry.where_in
        if entry.where_reason(where.read_text() if where.is_file() else None) is not None:
            got[entry.id] = "-"
            continue
        path = root / entry.file
        source = path.read_text() if path.is_file() else None
        assert entry.file in scope, f"{entry.id}: {entry.file} is not in the scope"
        assert source is not None
        catalogue.apply(entry, source)  # CatalogueError: the entry is wrong for this tree
        got[entry.id] = "ok"
    return got


@pytest.fixture(scope="module")
def table(
    lightspeed_repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, str]]:
    from ctxaudit.targets.lightspeed.tree import resolve
    from mutation.fixed_tree import fixed_tree

    out: dict[str, dict[str, str]] = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CTXAUDIT_LIGHTSPEED_REPO", str(lightspeed_repo))
        for name, spec in TREES.items():
            out[name] = catalogue_part(resolve(spec, lightspeed_repo).root / "src")
            dest = tmp_path_factory.mktemp("fixed") / "tree"
            fixed, _applied = fixed_tree(TARGET, spec, ["all"], dest)
            out[f"{name}+fix"] = catalogue_part(fixed.root)
    return out


def test_every_entry_applies_or_is_not_for_the_tree(table: dict[str, dict[str, str]]) -> None:
    entries = [e.id for e in catalogue.load(target=TARGET)]
    width = max(map(len, entries))
    print("\n" + "entry".ljust(width), *(n.ljust(15) for n in table))
    for ident in entries:
        print(ident.ljust(width), *(table[n][ident].ljust(15) for n in table))
    # `where` chooses trees: an entry for none of them is a regex that matches nothing
    unused = [i for i in entries if all(got[i] == "-" for got in table.values())]
    assert not unused, f"entries for none of the trees: {unused}"
