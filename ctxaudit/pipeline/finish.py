"""The end of an audit run: the reports over every version (the matrix, the files CI
systems read), where the time went, each version's line, and the exit code."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

from ctxaudit import fix_patches
from ctxaudit.pipeline.ci_files import write_ci_files
from ctxaudit.pipeline.options import one_line
from ctxaudit.pipeline.progress import summary

if TYPE_CHECKING:
    from pathlib import Path

    from ctxaudit.pipeline.run import AuditRun


def finish(run: AuditRun, accepted: dict[str, list[str]] | None) -> int:
    """The reports over every version (the matrix; JUnit XML and SARIF where asked
    for; the fixes' patches no report refers to removed), where the time went, and the
    exit code: 2 when something could not be checked, 1 when a property or a gate
    fails, else 0."""
    from ctxaudit.targets import get as get_target

    options = run.options
    fix_patches.prune(options.out)  # the patches no version's report refers to any more
    md_path, html_path = write_matrix(options.out)
    if options.kept:
        print(f"ctxaudit: matrix of every version in {options.out}: {md_path.name}, "
              f"{html_path.name}")  # fmt: skip
    done = [run.reports[t.label] for t in options.targets if t.label in run.reports]
    props = {t.kind: dict(get_target(t.kind).properties) for t in options.targets}
    try:  # what CI systems read; ctxaudit's own error here is no verdict
        write_ci_files(run, done, props, accepted)
    except Exception as exc:  # noqa: BLE001
        print(f"ctxaudit: COULD NOT CHECK: writing the CI report files failed: "
              f"{type(exc).__name__}: {one_line(exc)}", file=sys.stderr)  # fmt: skip
        run.unchecked = True
    clock = run.clock
    clock.total_s = time.monotonic() - run.started
    clock.mutation_wall_s = clock.total_s - clock.properties_wall_s
    if options.cache:
        print(f"ctxaudit: reused from {run.steps.store.directory}: {run.steps.summary()}")
    for report in done:
        print(f"ctxaudit: {report.target}-{report.version}: {summary(report)}")
    written = clock.write(options.out)
    if options.kept:
        print(f"ctxaudit: where the time went: {written}")
    print(f"ctxaudit: done in {clock.total_s:.0f} s", flush=True)
    code = 2 if run.unchecked else 1 if run.failed else 0
    if options.shard is not None:  # what `ctxaudit merge` reads
        from ctxaudit.pipeline.shards import identity, write_manifest

        took = [t.label for t in options.targets]
        write_manifest(options.out, options.shard, identity(options, run.seed), took,
                       finished=True, exit_code=code, reports=done, gates=run.gates,
                       mutation_shares=run.mutation_shares)  # fmt: skip
    if run.unchecked:
        print("ctxaudit: COULD NOT CHECK everything (see the lines above): exit 2",
              file=sys.stderr)  # fmt: skip
    return code


def write_matrix(out: Path, pause: bool = True) -> tuple[Path, Path]:
    """matrix.md and matrix.html of every version in ``out`` that has a readable report;
    the folders skipped are named in the matrix and in one line on stderr."""
    from ctxaudit import matrix

    m = matrix.build(matrix.find_reports(out))
    if m.skipped:
        names = "; ".join(f"{s.dir.name} ({s.why})" for s in m.skipped)
        print(f"ctxaudit: matrix: skipped {len(m.skipped)} unreadable report(s): {names}",
              file=sys.stderr, flush=True)  # fmt: skip
    return matrix.write(m, out, pause=pause)
