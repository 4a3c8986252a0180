"""``ctxaudit audit --target PATH --since REV``: the functions in the mutation scope that
changed since REV in the target's git history.

A pull-request gate mutates only those: ``git diff --unified=0 REV`` over the target's
package (the working tree against REV, so uncommitted edits count) gives the changed lines
of each file; a function in scope changed when a changed line of the new file falls in its
span or a deleted line sat inside it. The mutation run gets one ``--only`` glob per changed
function (``<file>:<function>:*``, which also selects its catalogued mutants).

The audit asks it as a process, ``python -m mutation.since --target NAME --spec SPEC
--rev REV [--repo PATH]``, which prints the changed functions and files as JSON (exit 2
with one line when REV or the tree cannot be used): ctxaudit never imports the mutation
runner.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

from ctxaudit.since import Changed, SinceError

HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def _git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-C", str(cwd), *args], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        msg = (proc.stderr.strip().splitlines() or ["git failed"])[-1]
        raise SinceError(f"git {' '.join(args[:2])} in {cwd}: {msg}")
    return proc.stdout


def changed_lines(root: Path, rev: str, package: str) -> dict[str, set[int]]:
    """file (relative to ``root``) -> lines of the current file that differ from REV.

    A pure deletion counts as a change of the line after it (and the one before), so a
    function that only lost lines is changed too."""
    top = Path(_git(root, "rev-parse", "--show-toplevel").strip())
    try:
        _git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    except SinceError:
        raise SinceError(f"--since {rev}: no such revision in {top}") from None
    prefix = root.resolve().relative_to(top.resolve()).as_posix()
    prefix = "" if prefix == "." else prefix + "/"
    diff = _git(root, "diff", "--unified=0", "--no-color", "--no-renames", rev, "--", package)
    out: dict[str, set[int]] = {}
    current: str | None = None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            name = line[4:]
            current = None
            if name.startswith("b/") and name[2:].startswith(prefix):
                current = name[2 + len(prefix) :]
                out.setdefault(current, set())
            continue
        m = HUNK.match(line)
        if m and current is not None:
            start, count = int(m.group(1)), int(m.group(2) or "1")
            if count == 0:  # lines deleted after line `start`
                out[current].update({start, start + 1})
            else:
                out[current].update(range(start, start + count))
    return out


def changed_functions(root: Path, rev: str, package: str, in_scope: object = None) -> Changed:
    """The functions (of the mutation scope, if ``in_scope(path, qual)`` is given) that
    changed since ``rev`` under ``root/package``."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    from mutation.operators import function_index

    lines = changed_lines(root, rev, package)
    found: set[tuple[str, str]] = set()
    for path, changed in lines.items():
        src = root / path
        if not changed or src.suffix != ".py" or not src.is_file():
            continue
        try:
            module = cst.parse_module(src.read_text(encoding="utf-8"))
        except cst.ParserSyntaxError as exc:
            first = str(exc).strip().splitlines()[0]
            raise SinceError(f"{src}: does not parse ({first})") from None
        positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        for qual, _cls, node in function_index(module).values():
            pos = positions[node]
            if any(pos.start.line <= n <= pos.end.line for n in changed) and (
                in_scope is None or in_scope(path, qual)  # type: ignore[operator]
            ):
                found.add((path, qual))
    return Changed(rev, tuple(sorted(found)), tuple(sorted(lines)))


def changed_for(kind_name: str, spec: str, rev: str, repo: Path | None = None) -> Changed:
    """The changed functions of one target version, for ``--since REV``. Only targets
    whose code on disk is a git working tree can use it: a source tree given as a path,
    or the ledger (ctxaudit's repository); a released version (a wheel, a tag checked
    out under .cache/) has no history of its own."""
    from ctxaudit import targets
    from mutation.config import target_config

    kind = targets.get(kind_name)
    try:
        found = kind.resolve(spec or None, repo)
    except targets.TargetError as exc:
        raise SinceError(str(exc)) from None
    if kind.mutation is None or found.copy_dir is None or not _in_git(found.mutation_root):
        raise SinceError(
            "--since needs targets with a git history: a source tree given as a path, "
            f"or ledger (not {found.label})"
        )
    cfg = target_config(kind.mutation.section)
    return changed_functions(found.mutation_root, rev, found.copy_dir, cfg.in_scope)


def _in_git(path: Path) -> bool:
    """``path`` is in a git working tree, and tracked there (not a virtual environment or
    a cache that happens to sit inside one and is ignored)."""

    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", "-C", str(path), *args], capture_output=True, text=True, check=False
        )

    inside = git("rev-parse", "--is-inside-work-tree")
    if inside.returncode != 0 or inside.stdout.strip() != "true":
        return False
    return git("check-ignore", "-q", ".").returncode != 0


def main(argv: list[str] | None = None) -> int:
    """Print one target version's changed functions and files as JSON; exit 2 with one
    line on stderr when REV or the tree cannot be used."""
    parser = argparse.ArgumentParser(prog="python -m mutation.since")
    parser.add_argument("--target", required=True)
    parser.add_argument("--spec", default="")
    parser.add_argument("--rev", required=True)
    parser.add_argument("--repo", type=Path)
    args = parser.parse_args(argv)
    try:
        changed = changed_for(args.target, args.spec, args.rev, args.repo)
    except SinceError as exc:
        print(str(exc).splitlines()[0], file=sys.stderr)
        return 2
    print(json.dumps({"functions": changed.functions, "files": changed.files}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
