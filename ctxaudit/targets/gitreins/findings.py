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

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
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
    # compaction_threshold value), "cap-text" (an evaluator: config section), "failure" (a
    # model.valve.Failure) or "trajectory" (handled in the test, see region)
    repro: str  # pytest node id of the regression test

    def applies(self, target: str, version: str) -> bool:
        return target == self.target and version in self.versions


PINNED = frozenset({"0.17.1"})


def _never(_: Any) -> bool:
    return False


def _legacy_parts(section: dict[str, Any]) -> tuple[list[str], str]:
    """(token parts, time part) of a legacy cap string, by its form (see
    model.config.parse_legacy)."""
    parts = [p.strip() for p in str(section["cap"]).split("/")]
    first_is_iterations = parts[0].lstrip("-").isdigit() or parts[0].lower() in (
        "unlimited",
        "none",
    )
    if len(parts) == 4:
        return parts[2:], parts[1]
    if len(parts) == 2:
        return ([], parts[1]) if first_is_iterations else (parts, "")
    return [], ("" if first_is_iterations else parts[0])


def _token_texts(section: dict[str, Any]) -> list[str]:
    env = section.get("env", {})
    from_env = [
        env[k] for k in ("GITREINS_MAX_INPUT_TOKENS", "GITREINS_MAX_OUTPUT_TOKENS") if k in env
    ]
    if "cap" in section:
        return _legacy_parts(section)[0] + from_env
    keys = [str(section[k]) for k in ("max_input_tokens", "max_output_tokens") if k in section]
    return keys + from_env


def _float_short(text: str) -> bool:
    """True for token text like '4.1M' whose float product truncates below its value."""
    m = re.match(r"^(\d+\.\d+)\s*([kKmM])$", text.strip())
    if not m:
        return False
    scale = 1_000 if m.group(2) in "kK" else 1_000_000
    return int(float(m.group(1)) * scale) < Decimal(m.group(1)) * scale


def _not_whole(text: str) -> bool:
    """True for token text like '1.5' or '0.0001k': a number (k/M allowed) that is not a
    whole number of tokens."""
    m = re.match(r"^(\d+(?:\.\d+)?)\s*([kKmM]?)$", text.strip())
    if not m:
        return False
    value = Decimal(m.group(1)) * {"": 1, "k": 1_000, "m": 1_000_000}[m.group(2).lower()]
    return value != value.to_integral_value()


# V6's context keywords (model/valve.py::CONTEXT_WORDS), as gitreins lists them.
_CONTEXT_WORDS = ("context", "token", "maximum", "exceeded", "window", "truncat", "length")


def _time_text(section: dict[str, Any]) -> str:
    """The time texts of a config ``evaluator:`` section (individual key or legacy
    string) and of its GITREINS_MAX_TIME override, joined."""
    env_time = str(section.get("env", {}).get("GITREINS_MAX_TIME", ""))
    if "cap" in section:
        return _legacy_parts(section)[1] + " " + env_time
    return str(section.get("max_time", "")) + " " + env_time


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
            "spent but never metered, and the run ends. When the valve is due at that moment "
            "the conversation is compacted first (meters reset, one of the three compactions "
            "spent) for a call that cannot happen; found by the thorough profile, seed "
            "314115651."
        ),
        region=(
            "max_iterations > 0 and the credit reaches it through tool-call weight while fewer "
            "than int(max_iterations) LLM calls were made since the last compaction (the test "
            "tolerates exactly one refused, unmetered call there, preceded by a compaction "
            "exactly when the model's valve is due, and checks that shape)"
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
    Finding(
        id="GR-B6-DECIMAL-TIME",
        target="gitreins",
        versions=PINNED,
        prop="B6",
        summary=(
            "A time cap with a decimal point ('1.5h', '0.5 hours', '1.0s') is silently ignored: "
            "max_seconds keeps its previous value (unlimited by default), no warning."
        ),
        region="max_time (or the time part of the legacy cap string) written with a decimal point",
        in_region=lambda section: "." in _time_text(section),
        scope="cap-text",
        repro="tests/gitreins/test_findings.py::test_gr_b6_decimal_time_ignored",
    ),
    Finding(
        id="GR-B6-SPACED-TOKEN-UNIT",
        target="gitreins",
        versions=PINNED,
        prop="B6",
        summary=(
            "A token cap with a space before its unit ('200 k') is not recognised: as a key it "
            "is silently ignored (the 10M default stays); inside the legacy cap string the "
            "remaining token part shifts, so '100/30m/200k/50 k' sets the OUTPUT cap to 200k and "
            "leaves the input budget unlimited."
        ),
        region="a token cap (key or legacy part) written with whitespace between number and unit",
        in_region=lambda section: any(" " in t.strip() for t in _token_texts(section)),
        scope="cap-text",
        repro="tests/gitreins/test_findings.py::test_gr_b6_spaced_token_unit",
    ),
    Finding(
        id="GR-B6-LEGACY-MINUTES",
        target="gitreins",
        versions=PINNED,
        prop="B6",
        summary=(
            "In the legacy cap string (iterations/time/input/output) a token part with a "
            "lowercase m ('1.5m' = 1.5M tokens) is read as minutes and dropped, and the other "
            "token part moves to the output cap: '100/30m/200k/1m' leaves the input budget "
            "unlimited and sets the output cap to 200k."
        ),
        region="legacy cap string whose input or output part ends in a lowercase 'm'",
        in_region=lambda section: (
            "cap" in section and any(t.strip().endswith("m") for t in _token_texts(section))
        ),
        scope="cap-text",
        repro="tests/gitreins/test_findings.py::test_gr_b6_legacy_minutes",
    ),
    Finding(
        id="GR-B6-FLOAT-TRUNCATION",
        target="gitreins",
        versions=PINNED,
        prop="B6",
        summary=(
            "Token caps with a decimal point are computed in binary floating point and truncated: "
            "'4.1M' becomes 4099999 and '32.3k' 32299 (294 of the 39960 texts d.dK/M with "
            "d in 1..999 are one token short)."
        ),
        region=(
            "a token cap with a decimal point whose float product float(n) * 1000 or "
            "* 1000000 falls just below the whole number the text says"
        ),
        in_region=lambda section: any(_float_short(t) for t in _token_texts(section)),
        scope="cap-text",
        repro="tests/gitreins/test_findings.py::test_gr_b6_float_truncation",
    ),
    # V6 (docs/properties.md): gitreins decides "context error" in engine/evaluator.py,
    # AgenticEvaluator.evaluate, `except Exception as e:` after `self.llm.chat(...)`.
    # Reproduce on 0.13.0-0.17.1. Minimal fix, two independent lines (0.17.1: lines 1261
    # and 1275; fixes/gr_v6_*.py):
    #   GR-V6-CLIENT-ERROR-COMPACTS: `if 400 <= status < 500 and status != 429:`
    #     -> `if status in (400, 413):`
    #   GR-V6-STATUS-IGNORED-FOR-KEYWORDS: `kw in err_msg` -> `kw in err_msg and
    #     getattr(e, "response", None) is None` (the keyword sniff only for errors that
    #     carry no HTTP status).
    Finding(
        id="GR-V6-CLIENT-ERROR-COMPACTS",
        target="gitreins",
        versions=PINNED,
        prop="V6",
        summary=(
            "Every HTTP 4xx but 429 counts as a context error: a 401 (bad API key), 403 or 404 "
            "(no such model) spends a compaction and calls the LLM again, up to three times, "
            "where V6 compacts only on 400 and 413 and ends the run on any other status."
        ),
        region="an LLM call that fails with HTTP 4xx other than 400, 413 and 429 (any text)",
        in_region=lambda failure: (
            failure.status is not None
            and 400 <= failure.status < 500
            and failure.status not in (400, 413, 429)
        ),
        scope="failure",
        repro="tests/gitreins/test_findings.py::test_gr_v6_client_error_compacts",
    ),
    Finding(
        id="GR-V6-STATUS-IGNORED-FOR-KEYWORDS",
        target="gitreins",
        versions=PINNED,
        prop="V6",
        summary=(
            "The context keywords are looked for in the text of every error that reached the "
            "provider, whatever its HTTP status: OpenAI's 429 'Rate limit reached ... on tokens "
            "per min (TPM)' and a 503 'maximum capacity exceeded' each spend a compaction, "
            "where V6 says a status other than 400 and 413 never compacts."
        ),
        region=(
            "an LLM call that fails with an HTTP status other than 400 and 413 whose text "
            "names a context keyword (context, token, maximum, exceeded, window, truncat, length)"
        ),
        in_region=lambda failure: (
            failure.status is not None
            and failure.status not in (400, 413)
            and any(w in failure.text.lower() for w in _CONTEXT_WORDS)
        ),
        scope="failure",
        repro="tests/gitreins/test_findings.py::test_gr_v6_status_ignored_for_keywords",
    ),
    # B6. Minimal fix (fixes/gr_b6_fractional_tokens.py): engine/eval_cap.py's
    # _parse_tokens (0.17.1 line 259) and _parse_slash_tokens check the value in Decimal and
    # raise ValueError naming a `key` argument, which each caller passes (max_input_tokens,
    # max_output_tokens, GITREINS_MAX_*_TOKENS, cap).
    Finding(
        id="GR-B6-FRACTIONAL-TOKENS",
        target="gitreins",
        versions=PINNED,
        prop="B6",
        summary=(
            "A token cap that is not a whole number of tokens is silently truncated, not a "
            "configuration error: max_input_tokens '1.5' becomes 1, and '0.0001k' becomes 0, "
            "which means no cap at all; the same in GITREINS_MAX_*_TOKENS and in the token "
            "parts of the legacy cap string."
        ),
        region=(
            "a token cap (key, GITREINS_MAX_*_TOKENS or legacy part) written as a number, with "
            "or without k/M, whose value is not a whole number of tokens"
        ),
        in_region=lambda section: any(_not_whole(t) for t in _token_texts(section)),
        scope="cap-text",
        repro="tests/gitreins/test_findings.py::test_gr_b6_fractional_tokens_truncated",
    ),
    # Known history: registered for no version (fixed before the pinned one);
    # the audit checks which releases they affect.
    Finding(
        id="GR-GAP-062",
        target="gitreins",
        versions=frozenset(),
        prop="V7",
        summary=(
            "The valve compared the largest single prompt with ratio * max_input_tokens while "
            "the cap meters the running sum: on real budgets it never fired and runs died at "
            "the input cap. Fixed in 0.15.0."
        ),
        region=(
            "any budget where the sum of calls passes the cap before one prompt passes "
            "the threshold"
        ),
        in_region=_never,
        scope="trajectory",
        repro="tests/gitreins/test_findings.py::test_gr_gap_062_valve_reads_largest_prompt",
    ),
    Finding(
        id="GR-POC-14-TRANSPORT-COMPACTS",
        target="gitreins",
        versions=frozenset(),
        prop="V6",
        summary=(
            "A transport failure whose text says 'Max retries exceeded' matched the context "
            "keywords, so an unreachable provider was retried through every compaction round. "
            "Fixed in 0.14.0 (DF-GITREINS-POC-14)."
        ),
        region="an LLM call that fails in transport with a message naming a context keyword",
        in_region=_never,
        scope="trajectory",
        repro="tests/gitreins/test_findings.py::test_gr_poc_14_transport_failure_compacts",
    ),
]


def registered(target: str, version: str) -> list[Finding]:
    """The findings registered for a target version.

    ``CTXAUDIT_FINDINGS`` overrides the registry for one run (the audit uses
    it): ``all`` (every known finding of the target, to learn which reproduce
    on a version) or a comma-separated list of ids (the ones that do)."""
    override = os.environ.get("CTXAUDIT_FINDINGS")
    if override is not None:
        ids = {i.strip() for i in override.split(",") if i.strip()}
        return [f for f in FINDINGS if f.target == target and ("all" in ids or f.id in ids)]
    return [f for f in FINDINGS if f.applies(target, version)]


def excluded_regions(target: str, version: str, scope: str) -> list[Region]:
    return [f.in_region for f in registered(target, version) if f.scope == scope]


def by_id(finding_id: str) -> Finding:
    for f in FINDINGS:
        if f.id == finding_id:
            return f
    raise KeyError(finding_id)
