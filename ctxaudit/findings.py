"""Findings: where a target breaks a property. The one reviewed place.

Each finding names the property, the target versions it is registered for,
the narrowest region of inputs where it shows (as a predicate the property
tests use to leave exactly that region out), and the regression test that
reproduces it. A regression test asserts the finding still reproduces, so it
fails when the target is fixed; the finding is then removed here.

Findings are registered for the pinned version only. Other versions' breaks
are what the audit reports.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Region = Callable[[Any], bool]


@dataclass(frozen=True)
class Finding:
    id: str
    target: str
    versions: frozenset[str]
    prop: str
    summary: str
    region: str  # in words
    in_region: Region  # the same region as a predicate over what `scope` names
    scope: str  # what in_region reads: "valve-config" (a ValveConfig), "threshold" (a raw
    # compaction_threshold value) or "trajectory" (handled in the test, see region)
    repro: str  # pytest node id of the regression test

    def applies(self, target: str, version: str) -> bool:
        return target == self.target and version in self.versions


PINNED = frozenset({"0.17.1"})


def _never(_: Any) -> bool:
    return False


FINDINGS: list[Finding] = [
    Finding(
        id="GR-V2-UNLIMITED-COMPACTS",
        target="gitreins",
        versions=PINNED,
        prop="V2",
        summary=(
            "With an unlimited input budget (max_input_tokens <= 0) the valve's threshold is "
            "int(-1 * ratio) == 0, so any call that meters input compacts the conversation "
            "(three times per run), although nothing is being protected."
        ),
        region="max_input_tokens <= 0 (unlimited input budget); any input > 0",
        in_region=lambda cfg: cfg.caps.max_input_tokens <= 0,
        scope="valve-config",
        repro="tests/gitreins/test_findings.py::test_gr_v2_unlimited_compacts",
    ),
    Finding(
        id="GR-B3-LOOP-CALL-AT-CAP",
        target="gitreins",
        versions=PINNED,
        prop="B3",
        summary=(
            "The loop does not check the iteration credit before calling the LLM (only its own "
            "count of LLM calls), so when tool calls bring the credit to max_iterations the LLM "
            "is called once more; EvalCap then refuses to record that call: its tokens are "
            "spent but never metered, and the run ends."
        ),
        region=(
            "max_iterations > 0 and the credit reaches it through tool-call weight while fewer "
            "than int(max_iterations) LLM calls were made since the last compaction (the test "
            "tolerates exactly one refused, unmetered call there and checks that shape)"
        ),
        in_region=_never,
        scope="trajectory",
        repro="tests/gitreins/test_findings.py::test_gr_b3_loop_calls_llm_at_cap",
    ),
    Finding(
        id="GR-B3-FRACTIONAL-ITERATIONS",
        target="gitreins",
        versions=PINNED,
        prop="B3",
        summary=(
            "The loop stops after int(max_iterations) LLM calls (per context), so a fractional "
            "cap such as 2.5 ends the run with the credit still below it (2.2 of 2.5), where "
            "B3 allows the call that takes the credit slightly over."
        ),
        region="max_iterations > 0 and not a whole number",
        in_region=lambda cfg: cfg.caps.max_iterations > 0 and cfg.caps.max_iterations % 1 != 0,
        scope="valve-config",
        repro="tests/gitreins/test_findings.py::test_gr_b3_fractional_iterations_truncated",
    ),
    Finding(
        id="GR-V8-THRESHOLD-UNVALIDATED",
        target="gitreins",
        versions=PINNED,
        prop="V8",
        summary=(
            "compaction_threshold is used as read from config.yaml, unchecked: a string (even "
            "'0.8') makes int(max_input_tokens * value) repeat the string max_input_tokens "
            "times, so the loop crashes after the first LLM call and allocates memory in "
            "proportion to the budget (MemoryError on a 1e9 budget under a 1.5 GiB limit); a "
            "number outside (0, 1) is used as-is with no warning (>= 1: the valve never fires "
            "before the cap; <= 0: it fires on every call); None, true or a list are no "
            "configuration error (a crash later, or true read as 1)."
        ),
        region="compaction_threshold is anything but a number (int or float) in (0, 1)",
        in_region=lambda raw: (
            not (isinstance(raw, int | float) and not isinstance(raw, bool) and 0 < raw < 1)
        ),
        scope="threshold",
        repro="tests/gitreins/test_findings.py::test_gr_v8_threshold_unvalidated",
    ),
]


def registered(target: str, version: str) -> list[Finding]:
    return [f for f in FINDINGS if f.applies(target, version)]


def excluded_regions(target: str, version: str, scope: str) -> list[Region]:
    return [f.in_region for f in registered(target, version) if f.scope == scope]


def by_id(finding_id: str) -> Finding:
    for f in FINDINGS:
        if f.id == finding_id:
            return f
    raise KeyError(finding_id)
