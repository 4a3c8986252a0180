"""``ctxaudit merge DIR... --out OUT``: the output folders of the parts of one sharded
audit (``audit --shard i/N``, :mod:`ctxaudit.pipeline.shards`) as one report folder.

What it checks before it writes anything, each refusal one line and exit 2:

- every folder holds a part's manifest, of this ctxaudit's format;
- every part belongs to the same audit: the same suite (its digest), plan, profile,
  seeds and options (the first difference is named);
- every part from 1 to N is there, once, and finished (a part that crashed or was
  stopped is no verdict: "could not check", never a partial one that looks whole).

Then each part's version folders, and its fixes' patches, are copied into ``OUT``
(a version's folder replaced whole, as an audit replaces it; a file two parts both
write must be the same), the patches no report refers to are removed, the matrix and
the time table are rebuilt over ``OUT``, and ``--junit-xml`` and ``--sarif`` are written
from the parts' reports in the plan's order: what one unsharded run writes. The exit
code is the audit's: 2 when a part could not check everything, else 1 when a property
or a gate fails, else 0.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ctxaudit import fix_patches
from ctxaudit.pipeline.finish import write_matrix
from ctxaudit.pipeline.shards import MANIFEST, SCHEMA
from ctxaudit.timing import FOLDER as TIMING_FOLDER

#: what a part writes at the top of its folder besides the versions' and fixes' folders
_REBUILT = {MANIFEST, "matrix.md", "matrix.html", TIMING_FOLDER}


class MergeError(Exception):
    """Why the parts cannot be merged (one line; exit 2)."""


def merge(
    dirs: Sequence[Path], out: Path, junit_xml: Path | None = None, sarif: Path | None = None
) -> int:
    """Merge the parts in ``dirs`` into ``out``; the audit's exit code (2 when they
    cannot be merged, with the reason on stderr)."""
    try:
        parts = check(read_parts(dirs))
        write(parts, out)
    except MergeError as exc:
        print(f"ctxaudit: merge: {exc}", file=sys.stderr)
        return 2
    reports = _reports(parts)
    gates = {label: (int(g[0]), str(g[1])) for _, doc in parts for label, g in doc["gates"].items()}
    gates.update(merge_mutation(parts, out, {f"{r.target}-{r.version}" for r in reports}))
    write_matrix(out)
    _times(parts, out)
    _ci_files(parts, reports, gates, junit_xml, sarif)
    from ctxaudit.pipeline.progress import summary

    for report in reports:
        print(f"ctxaudit: {report.target}-{report.version}: {summary(report)}")
    code = max(int(doc["exit"]) for _, doc in parts)
    for label, (gate, line) in gates.items():
        print(f"ctxaudit: {label}: {line} -> {out / label}/mutation.md")
        code = max(code, gate if gate in (0, 1) else 2)
    count = parts[0][1]["shard"][1]
    print(f"ctxaudit: merged {count} shard(s) into {out}: exit {code}", flush=True)
    if code == 2:
        print("ctxaudit: COULD NOT CHECK everything (a shard says so): exit 2", file=sys.stderr)
    return code


def read_parts(dirs: Sequence[Path]) -> list[tuple[Path, dict[str, Any]]]:
    """Each folder with its manifest, read."""
    parts = []
    for folder in dirs:
        path = folder / MANIFEST
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise MergeError(f"{folder}: no {MANIFEST}: not an `audit --shard` output") from None
        except (OSError, ValueError) as exc:
            raise MergeError(f"{path}: unreadable ({exc})") from None
        if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
            raise MergeError(f"{path}: a manifest of another ctxaudit (schema "
                             f"{doc.get('schema') if isinstance(doc, dict) else '?'})")  # fmt: skip
        why = _malformed(doc)
        if why:
            raise MergeError(f"{path}: not a manifest this ctxaudit wrote: {why}")
        parts.append((folder, doc))
    if not parts:
        raise MergeError("no shard folder given")
    return parts


#: a manifest's fields and their types (shards.write_manifest)
_FIELDS = {"shard": list, "identity": dict, "took": list, "finished": bool, "reports": list,
           "gates": dict, "mutation_shares": dict}  # fmt: skip


def _malformed(doc: dict[str, Any]) -> str:
    """Why a manifest cannot be read ("" when it can): a field missing or of another type,
    a report that is not one (edited by hand, truncated, another version's)."""
    from ctxaudit.result_json import InvalidEntry, report_from_json

    for name, kind in _FIELDS.items():
        if not isinstance(doc.get(name), kind):
            return f"{name!r} is missing or not a {kind.__name__}"
    shard = doc["shard"]
    if (
        len(shard) != 2
        or not all(isinstance(n, int) for n in shard)
        or not 1 <= shard[0] <= shard[1]
    ):
        return f"'shard' is {shard!r}, not [i, n]"
    if doc["finished"] and not isinstance(doc.get("exit"), int):
        return "a finished part without its exit code"
    for value in doc["reports"]:
        try:
            report_from_json(value)
        except InvalidEntry as exc:
            return f"a report: {exc}"
    return ""


def check(parts: list[tuple[Path, dict[str, Any]]]) -> list[tuple[Path, dict[str, Any]]]:
    """``parts`` in shard order once every check above passes."""
    first_dir, first = parts[0]
    for folder, doc in parts[1:]:
        for key in first["identity"]:
            if doc["identity"].get(key) != first["identity"][key]:
                raise MergeError(
                    f"{folder} and {first_dir} are not shards of one audit: their {key} "
                    f"differs ({_short(doc['identity'].get(key))} != "
                    f"{_short(first['identity'][key])})"
                )
        if doc["shard"][1] != first["shard"][1]:
            raise MergeError(f"{folder} is a shard of {doc['shard'][1]}, {first_dir} of "
                             f"{first['shard'][1]}")  # fmt: skip
    count = first["shard"][1]
    by_index: dict[int, Path] = {}
    for folder, doc in parts:
        index = doc["shard"][0]
        if index in by_index:
            raise MergeError(f"shard {index}/{count} given twice: {by_index[index]} and {folder}")
        by_index[index] = folder
    missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in by_index]
    if missing:
        raise MergeError(f"COULD NOT CHECK: shard(s) {', '.join(missing)} missing: no merged "
                         "verdict")  # fmt: skip
    unfinished = [f"{doc['shard'][0]}/{count} ({folder})" for folder, doc in parts
                  if not doc.get("finished")]  # fmt: skip
    if unfinished:
        raise MergeError(f"COULD NOT CHECK: shard(s) {', '.join(unfinished)} did not finish: "
                         "no merged verdict")  # fmt: skip
    return sorted(parts, key=lambda part: part[1]["shard"][0])


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 80 else text[:77] + "..."


def write(parts: list[tuple[Path, dict[str, Any]]], out: Path) -> None:
    """Each part's folders into ``out``; then the patches, the matrix, the times. Every
    file is placed before anything is written: two parts that wrote one file differently
    stop the merge with ``out`` untouched."""
    files: dict[Path, tuple[Path, Path]] = {}  # relative to out -> (the part, its file)
    for folder, _ in parts:
        for entry in sorted(folder.iterdir()):
            if entry.name in _REBUILT or entry.name.startswith("."):
                continue
            sources = sorted(entry.rglob("*")) if entry.is_dir() else [entry]
            for source in (s for s in sources if s.is_file()):
                rel = source.relative_to(folder)
                if rel in files and files[rel][1].read_bytes() != source.read_bytes():
                    raise MergeError(f"{rel}: the shards in {files[rel][0]} and {folder} "
                                     "wrote it differently")  # fmt: skip
                files.setdefault(rel, (folder, source))
    out.mkdir(parents=True, exist_ok=True)
    for label in {label for _, doc in parts for label in doc["took"]}:
        shutil.rmtree(out / label, ignore_errors=True)  # replaced whole, as an audit does
    for rel, (_, source) in sorted(files.items()):
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, out / rel)
    fix_patches.prune(out)


def merge_mutation(
    parts: list[tuple[Path, dict[str, Any]]], out: Path, reported: set[str]
) -> dict[str, tuple[int, str]]:
    """Each version's mutants, run in shares by the parts, merged into its mutation
    report and gate (``mutation merge``), the shares' files then removed: label ->
    (the gate's exit code, its line). A version whose properties no part reported gets
    no gate, as in an unsharded run; a share that is missing is could not check. The
    merge is the mutation runner's (``python -m mutation merge``, in its own process, as
    the audit runs the runner)."""
    import subprocess

    from ctxaudit.paths import REPO_ROOT
    from ctxaudit.pipeline.mutation_phase import gate_line

    count = parts[0][1]["shard"][1]
    gates: dict[str, tuple[int, str]] = {}
    shared = {label for _, doc in parts for label in doc.get("mutation_shares", {})}
    for label in sorted(shared):
        folder = out / label
        files = sorted(folder.glob(f"mutation-shard-*-of-{count}.json"))
        if label in reported:
            merged = subprocess.run(
                [sys.executable, "-m", "mutation", "merge", *map(str, files), "--out", str(folder)],
                cwd=REPO_ROOT, capture_output=True, text=True, check=False,
            )  # fmt: skip
            code = merged.returncode if merged.returncode in (0, 1) else 2
            said = (merged.stderr.strip() or merged.stdout.strip()).splitlines()[-1:]
            why = f"{len(files)} of {count} shares: {said[0] if said else '(no output)'}"
            gates[label] = (code, gate_line(code, why))
        for f in files:
            f.unlink()
    return gates


def _times(parts: list[tuple[Path, dict[str, Any]]], out: Path) -> None:
    """The time table over the parts: each version's times as its part recorded them;
    the wall time is the longest part's (the parts ran side by side)."""
    from ctxaudit.timing import AuditTime, TargetTime

    records = []
    for folder, _ in parts:
        path = folder / TIMING_FOLDER / "audit-time.json"
        if path.is_file():
            records.append(json.loads(path.read_text(encoding="utf-8")))
    if not records:
        return
    first = records[0]
    clock = AuditTime(command="ctxaudit merge", profile=first["profile"], jobs=first["jobs"])
    fields = set(TargetTime.__dataclass_fields__)
    for doc in records:
        for label, t in doc.get("targets", {}).items():
            clock.targets[label] = TargetTime(**{k: v for k, v in t.items() if k in fields})
    for name in ("properties_wall_s", "mutation_wall_s", "total_s"):
        setattr(clock, name, max(float(doc.get(name, 0.0)) for doc in records))
    clock.write(out)


def _reports(parts: list[tuple[Path, dict[str, Any]]]) -> list[Any]:
    """The parts' version reports in the plan's order."""
    from ctxaudit.result_json import report_from_json

    found = {}
    for _, doc in parts:
        for value in doc["reports"]:
            report = report_from_json(value)
            found[f"{report.target}-{report.version}"] = report
    plan = parts[0][1]["identity"]["plan"]
    labels = [f"{p['kind']}-{p['version']}" for p in plan]
    return [found[label] for label in labels if label in found]


def _ci_files(
    parts: list[tuple[Path, dict[str, Any]]],
    reports: list[Any],
    gates: dict[str, tuple[int, str]],
    junit_xml: Path | None,
    sarif: Path | None,
) -> None:
    """``--junit-xml`` and ``--sarif`` over every part's versions."""
    from ctxaudit.targets import get as get_target
    from ctxaudit.targets.base import Described

    props = {r.target: dict(get_target(r.target).properties) for r in reports}
    if junit_xml is not None:
        from ctxaudit import junit

        print(
            f"ctxaudit: JUnit XML: {junit.write(junit_xml, junit.document(reports, props, gates))}"
        )
    if sarif is not None:
        from ctxaudit import sarif as sarif_doc
        from ctxaudit.pipeline.ci_files import locator

        plan = [
            Described(p["kind"], p["spec"], p["version"], Path(p["repo"]) if p["repo"] else None)
            for p in parts[0][1]["identity"]["plan"]
        ]
        log = sarif_doc.document(reports, props, locator(plan))
        print(f"ctxaudit: SARIF: {sarif_doc.write(sarif, log)}")
