"""Build one broken target for the failure benchmark (``tests/failure_bench.py``).

    .venv/bin/python -m tests.broken_target gitreins|ledger|lightspeed NAME DEST

The breaks are the suites' own: ``gitreins`` a copy of the pinned gitreins with break
NAME of ``tests/gitreins/broken_copies.py``; ``ledger`` a copy of this repository with
the ledger mutant NAME of ``tests/settlement/check_mutants.py``; ``lightspeed`` a
clone of lightspeed-stack at main with break NAME of ``tests/lightspeed/breaks.py`` as
an uncommitted change (needs ``CTXAUDIT_LIGHTSPEED_REPO``). The target is built under
the folder DEST. Prints one JSON line: ``cwd``, the folder the suite's pytest runs in,
and ``options``, the target options of its command. Exits 2, with the reason on
stderr, when the break does not apply or the target cannot be built.

The benchmark runs this module as a child rather than importing it, as it runs the
suites themselves: ctxaudit's package never imports ``tests/``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


class CannotBuild(Exception):
    pass


def gitreins(name: str, dest: Path) -> tuple[Path, list[str]]:
    from tests.gitreins import broken_copies

    if name not in broken_copies.BREAKS:
        raise CannotBuild(f"no gitreins break {name!r} in tests/gitreins/broken_copies.py")
    _prop, rel, old, new = broken_copies.BREAKS[name]
    pinned = broken_copies.resolve("")
    copy = dest / "gitreins"
    shutil.copytree(pinned.root / "engine", copy / "engine")
    (copy / "PKG-INFO").write_text(
        f"Metadata-Version: 2.1\nName: gitreins\nVersion: {pinned.version}\n"
    )
    path = copy / rel
    text = path.read_text()
    if old not in text:
        raise CannotBuild(f"break {name!r} no longer applies to {rel}")
    path.write_text(text.replace(old, new, 1))
    return ROOT, [f"--gitreins={copy}"]


def ledger(name: str, dest: Path) -> tuple[Path, list[str]]:
    from tests.settlement import check_mutants

    found = [m for m in check_mutants.MUTANTS if m.name == name]
    if len(found) != 1:
        raise CannotBuild(f"no ledger mutant {name!r} in tests/settlement/check_mutants.py")
    root = dest / "repo"
    check_mutants.copy_repo(root)
    check_mutants.apply(root, found[0])
    return root, []


def lightspeed(name: str, dest: Path) -> tuple[Path, list[str]]:
    from ctxaudit.targets.lightspeed import tree as lstree
    from tests.lightspeed.breaks import BREAKS

    repo = lstree.repo_from(None)
    if repo is None:
        raise CannotBuild("lightspeed-stack breaks need CTXAUDIT_LIGHTSPEED_REPO")
    breaks = {b.name: b for b in BREAKS}
    if name not in breaks:
        raise CannotBuild(f"no lightspeed-stack break {name!r} in tests/lightspeed/breaks.py")
    brk = breaks[name]
    base = lstree.resolve("lightspeed-stack@main", repo)
    clone, mirror = dest / "tree", lstree.ensure_mirror(repo)
    clone_args = ["clone", "--quiet", "--shared", "--no-checkout", str(mirror), str(clone)]
    checkout_args = ["-C", str(clone), "checkout", "--quiet", "--detach", str(base.commit)]
    for args in (clone_args, checkout_args):
        subprocess.run(["git", *args], check=True, capture_output=True)
    path = clone / brk.file
    text = path.read_text()
    if text.count(brk.old) != 1:
        raise CannotBuild(f"break {name!r} no longer applies to {brk.file}")
    path.write_text(text.replace(brk.old, brk.new))
    return ROOT, [f"--lightspeed-repo={repo}", f"--lightspeed={clone}"]


BUILDERS = {"gitreins": gitreins, "ledger": ledger, "lightspeed": lightspeed}


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] not in BUILDERS:
        print(__doc__.split("\n\n")[1].strip(), file=sys.stderr)
        return 2
    kind, name, dest = argv
    try:
        cwd, options = BUILDERS[kind](name, Path(dest))
    except CannotBuild as e:
        print(e, file=sys.stderr)
        return 2
    print(json.dumps({"cwd": str(cwd), "options": options}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
