"""``ctxaudit baseline``: the audit's properties (no fix audit, no mutation, reports in
a temporary folder), then the known findings that reproduce, written to ``--out``
whole; nothing is written when the audit could not check everything."""

from __future__ import annotations

import dataclasses
import json
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

from ctxaudit.pipeline.options import AuditRequest, check_file, default_jobs
from ctxaudit.pipeline.run import audit


@dataclasses.dataclass(frozen=True)
class BaselineRequest:
    """What the command line gave ``baseline``: the targets (as ``audit --target``),
    the repositories their specs resolve in, the file to write, profile and seed."""

    specs: list[str]
    repos: dict[str, Path | None]
    out: Path
    profile: str = "ci"
    seed: int | None = None
    jobs: int = dataclasses.field(default_factory=default_jobs)  # the audit's --jobs
    command: str = "ctxaudit baseline"  # the command line, for the audit's time table


def write_baseline(request: BaselineRequest) -> int:
    """Audit the properties, then write the known findings that reproduce (exit 0), or
    nothing when the audit did not check everything (its exit code)."""
    from ctxaudit.baseline import write

    why = check_file("--out", request.out)
    if why is not None:
        print(f"ctxaudit: {why}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="ctxaudit-baseline-") as tmp:
        code = audit(
            AuditRequest(
                specs=list(request.specs), repos=request.repos, out=Path(tmp).resolve(),
                profile=request.profile,
                seeds=[] if request.seed is None else [request.seed],
                jobs=request.jobs, mutation=False, fixes=False, command=request.command,
                kept=False,
            )
        )  # fmt: skip
        if code not in (0, 1):
            print(f"ctxaudit: baseline not written: the audit did not check everything "
                  f"(exit {code})", file=sys.stderr)  # fmt: skip
            return code
        reports = [
            SimpleNamespace(**json.loads(p.read_text(encoding="utf-8")))
            for p in sorted(Path(tmp).glob("*/findings.json"))
        ]
    entries = write(request.out, reports)
    new = sum(len(r.findings) for r in reports)
    ids = ", ".join(e.id for e in entries) or "none"
    print(f"ctxaudit: baseline {request.out}: {len(entries)} known finding(s) ({ids}); "
          "give each its reason (why)")  # fmt: skip
    if new:
        print(f"ctxaudit: {new} new finding(s) have no id and are not in the baseline: "
              "they fail the gate until fixed or registered", file=sys.stderr)  # fmt: skip
    return 0
