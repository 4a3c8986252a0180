"""The audit pipeline: what ``ctxaudit audit`` and ``ctxaudit baseline`` do once the
command line (:mod:`ctxaudit.cli`) has parsed them.

- :mod:`.options`: the request the command line hands over, checked and resolved
  into the run's options before anything runs (:func:`prepare`);
- :mod:`.run`: one run under the interrupt handling, its phases in order:
- :mod:`.properties_phase`: phase 1, the property suites (and fix audit) of every
  target version, ``--jobs`` at a time;
- :mod:`.baseline`: the properties' verdict under ``--baseline``;
- :mod:`.mutation_phase`: phase 2, mutation and each version's gate;
- :mod:`.finish`: the matrix, the CI files (:mod:`.ci_files`), the time table, each
  version's line and the exit code;
- :mod:`.progress`: what the run says while it runs;
- :mod:`.baseline_file`: ``ctxaudit baseline``, an audit of the properties whose
  reproducing known findings become the baseline file;
- :mod:`.shards`: ``audit --shard i/N``, one part of the versions, and the manifest it
  writes; :mod:`.merge`: ``ctxaudit merge``, the parts as one report folder.

The reports are the report layer's (the audit's, :mod:`ctxaudit.matrix`,
:mod:`ctxaudit.junit`, :mod:`ctxaudit.sarif`); the pipeline says which and where.
"""

from __future__ import annotations

from ctxaudit.pipeline.baseline_file import BaselineRequest, write_baseline
from ctxaudit.pipeline.merge import merge
from ctxaudit.pipeline.options import (
    AuditOptions,
    AuditRequest,
    BadUsage,
    CannotStart,
    default_jobs,
    default_targets,
    empty_spec,
    prepare,
    unique,
)
from ctxaudit.pipeline.progress import summary
from ctxaudit.pipeline.run import DERANDOMIZED, audit
from ctxaudit.pipeline.shards import Shard, parse_shard

__all__ = [
    "DERANDOMIZED",
    "AuditOptions",
    "AuditRequest",
    "BadUsage",
    "BaselineRequest",
    "CannotStart",
    "Shard",
    "audit",
    "default_jobs",
    "default_targets",
    "empty_spec",
    "merge",
    "parse_shard",
    "prepare",
    "summary",
    "unique",
    "write_baseline",
]
