"""The mutation audit of one target version: ``python -m mutation run`` in a process of
its own (the audit never imports the mutation runner), with the options the audit was
given, and its status line read from the progress file the run writes."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxaudit import targets
from ctxaudit.suite_run import Ticker, run_with_ticker
from ctxaudit.targets.base import Described as Target
from ctxaudit.targets.base import MutationScope


@dataclass(frozen=True)
class MutationOptions:
    """How the mutation audit of one target version runs (:func:`run_mutation`).

    ``other_sample``: the share of 'other' mutants run (a deterministic sample).
    ``peer``: also run the same mutants against the target's own tests where it has
    some (gitreins). ``cache``: reuse mutant verdicts from ``.cache/mutation-verdicts/``
    (``--no-cache``). ``coverage``: also measure the scope's branch coverage (a run of
    the suite under coverage.py after the mutants: a figure beside the score, never a
    verdict).

    ``only``: run only the mutants matching these globs (``--since``: the changed
    functions' ``<file>:<function>:*``).

    ``known`` is the properties phase's known-findings result: the regions of the
    findings that affect this version are left out of the mutant runs too, as they
    were for the properties (else a test that meets a known finding fails on the
    unmutated version, is dropped, and its mutants read as survivors).

    ``fixes``: mutate a copy of the tree with these findings' fixes applied (``--mutate
    fixed``: the fix audit's fully fixed tree); their regions are no longer left out.

    ``shard``: only one deterministic part of the mutants (``audit --shard``)."""

    other_sample: float = 1.0
    peer: bool = True
    known: list[dict[str, Any]] | None = None
    only: Sequence[str] = ()
    cache: bool = True
    fixes: Sequence[str] = ()
    coverage: bool = True
    #: (i, n): only the i-th of n deterministic parts of the mutants runs, and the run
    #: writes ``mutation-shard-i-of-n.json`` for ``mutation merge`` (``audit --shard``)
    shard: tuple[int, int] | None = None


def run_mutation(
    target: Target,
    out_root: Path,
    ticker: Ticker | None = None,
    options: MutationOptions = MutationOptions(),
) -> tuple[int, str]:
    """Run the mutation audit of one target version in its own process (``python -m
    mutation run``, :func:`_mutation_command`). ``ticker`` gets "<phase> <done>/<total>,
    <elapsed>" while it runs (:class:`_MutationProgress`)."""
    kind = targets.get(target.kind)
    scope = kind.mutation
    if scope is None or not scope.audited:
        return 2, f"mutation not run: not wired into the audit for {target.kind} trees yet"
    cmd = _mutation_command(target, scope, out_root / target.label, options)
    env = dict(os.environ)
    if options.known is not None and kind.excludes_known:
        affecting = [k["id"] for k in options.known if k["affects"]]
        env["CTXAUDIT_FINDINGS"] = ",".join(affecting) or "none"
    with tempfile.TemporaryDirectory(prefix="ctxaudit-") as tmp:
        state = Path(tmp) / "progress.json"
        cmd += ["--progress-file", str(state)]
        status, output, _ = run_with_ticker(cmd, env, _MutationProgress(state, ticker))
    return status, output


def _mutation_command(
    target: Target, scope: MutationScope, out: Path, options: MutationOptions
) -> list[str]:
    """``python -m mutation run`` for one target version (its mutation ``scope``),
    writing its reports to ``out``, with the options the audit was given."""
    kind = targets.get(target.kind)
    cmd = [sys.executable, "-m", "mutation", "run", "--target", target.kind, "--out", str(out)]
    cmd += ["--other-sample", str(options.other_sample), "-q"]
    for glob in options.only:
        cmd += ["--only", glob]
    for fid in options.fixes:
        cmd += ["--fix", fid]
    if scope.spec_option:
        cmd += [scope.spec_option, target.spec]
    if kind.repo is not None and target.repo is not None:
        cmd += [kind.repo.option, str(target.repo)]
    if scope.peer and options.peer:
        cmd.append("--peer")
    if not options.cache:
        cmd.append("--no-cache")
    if not options.coverage:
        cmd.append("--no-coverage")
    if options.shard is not None:
        cmd += ["--shard", f"{options.shard[0]}/{options.shard[1]}"]
    return cmd


class _MutationProgress:
    """The mutation run's status line, read from the progress file it writes: its
    phase, the mutants done of all and the time left for them, the peer suite's state,
    the time so far. Called with the elapsed time every second (``run_with_ticker``)."""

    def __init__(self, state: Path, ticker: Ticker | None) -> None:
        self.state = state
        self.ticker = ticker
        self.started = time.monotonic()
        self.phase_start: dict[str, float] = {}

    def __call__(self, elapsed: str) -> None:
        if self.ticker is None:
            return
        try:
            st = json.loads(self.state.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.ticker(elapsed)
            return
        now = time.monotonic()
        began = self.phase_start.setdefault(st["phase"], now)
        text = f"{st['phase']}"
        if st["phase"] == "mutants":
            text += f" {st['done']}/{st['total']}"
        elif st["phase"] in ("recheck", "seed recheck"):  # survivors, or kills again
            text += f" {st['done']}"
        if st["phase"] == "mutants" and st["done"] >= 10:
            left = (now - began) / st["done"] * (st["total"] - st["done"])
            text += f", ~{left:.0f} s left for them"
        if st.get("peer"):  # the peer suite, running beside them
            text += f"; peer {st['peer']}"
        self.ticker(f"{text} ({now - self.started:.0f} s)")
