"""B6: caps as they reach gitreins from .gitreins/config.yaml parse to the
values their text says (model.config: token_cap, parse_seconds,
parse_legacy), and a token cap whose text does not say a whole number of tokens
is a configuration error that names the key. Cases run in batches in a
memory-limited child process."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ctxaudit.targets.gitreins import findings
from ctxaudit.targets.gitreins.config import run_caps
from ctxaudit.targets.gitreins.tree import GitreinsModules
from model.config import ConfigError, parse_iterations, parse_legacy, parse_seconds, token_cap

pytestmark = [pytest.mark.gitreins, pytest.mark.properties("B6")]

TOKEN_UNITS = ["", "k", "K", "m", "M"]
# every legacy form, with mixed token units
LEGACY_FORMS = ["200k/50", "3/4M", "200k/1M", "5K/2M", "1.5M/2k", "7K/9", "100", "-1", "0",
                "unlimited", "none", "30m", "2h", "45s", "100/30m", "unlimited/2h",
                "-1/10m/5k/6k", "-1/30m", "0/30m"]  # fmt: skip
TIME_UNITS = ["s", "m", "h", "sec", "min", "mins", "minutes", "hour", "hours"]


@st.composite
def number(draw: st.DrawFn, decimals: bool) -> str:
    whole = draw(st.one_of(st.integers(1, 40), st.integers(1, 999)), label="whole")
    if decimals and draw(st.booleans(), label="has_decimal"):
        return f"{whole}.{draw(st.integers(0, 9), label='decimal')}"
    return str(whole)


@st.composite
def token_text(draw: st.DrawFn) -> str:
    unit = draw(st.sampled_from(TOKEN_UNITS), label="unit")
    sep = draw(st.sampled_from(["", " "]), label="sep") if unit else ""
    if draw(st.integers(0, 9), label="fine") == 0:  # B6: '0.0001k' is not a whole count
        return f"0.{draw(st.integers(1, 9999), label='fraction'):04d}{sep}{unit}"
    return f"{draw(number(decimals=True))}{sep}{unit}"


@st.composite
def time_text(draw: st.DrawFn) -> str:
    unit = draw(st.sampled_from(TIME_UNITS), label="unit")
    sep = draw(st.sampled_from(["", " "]), label="sep")
    return f"{draw(number(decimals=True))}{sep}{unit}"


@st.composite
def sections(draw: st.DrawFn) -> dict[str, Any]:
    """One ``evaluator:`` section: individual keys, or the legacy combined string."""
    if draw(st.booleans(), label="legacy"):
        parts = [
            str(draw(st.integers(1, 500))),
            draw(time_text()),
            draw(token_text()),
            draw(token_text()),
        ]
        return {"cap": "/".join(parts)}
    section: dict[str, Any] = {}
    for key, text in (("max_time", time_text()), ("max_input_tokens", token_text()),
                      ("max_output_tokens", token_text())):  # fmt: skip
        if draw(st.booleans(), label=f"has_{key}"):
            section[key] = draw(text, label=key)
    if draw(st.booleans(), label="has_max_iterations"):
        section["max_iterations"] = draw(
            st.integers(-1, 300) | st.sampled_from([2.5, 0.5]) | st.integers(1, 300).map(str),
            label="max_iterations",
        )
    if draw(st.booleans(), label="has_tool_call_weight"):
        section["tool_call_weight"] = draw(st.sampled_from([0.1, 0.25, 1, 0.05]), label="weight")
    if draw(st.booleans(), label="has_env"):
        env = {}
        for name, text in (("GITREINS_MAX_TIME", time_text()),
                           ("GITREINS_MAX_INPUT_TOKENS", token_text()),
                           ("GITREINS_MAX_OUTPUT_TOKENS", token_text()),
                           ("GITREINS_MAX_ITERATIONS", st.integers(-1, 300).map(str))):  # fmt: skip
            if draw(st.booleans(), label=f"has_{name}"):
                env[name] = draw(text, label=name)
        section["env"] = env
    if draw(st.booleans(), label="int_tokens"):
        section["max_input_tokens"] = draw(st.integers(1, 10**7), label="max_input_tokens_int")
    return section


def expected(section: dict[str, Any]) -> dict[str, float]:
    """The caps the section says; raises ConfigError where a token cap does not
    say a whole number of tokens (B6)."""
    if "cap" in section:
        named = parse_legacy(section["cap"])
        return {"cap": None} if named is None else named  # type: ignore[dict-item]
    want: dict[str, float] = {}
    env = section.get("env", {})
    if "tool_call_weight" in section:
        want["tool_call_weight"] = float(section["tool_call_weight"])
    if "max_iterations" in section:
        want["max_iterations"] = parse_iterations(section["max_iterations"])  # type: ignore[assignment]
    if "max_time" in section:
        want["max_seconds"] = parse_seconds(section["max_time"])  # type: ignore[assignment]
    for key in ("max_input_tokens", "max_output_tokens"):
        if key in section:
            want[key] = token_cap(str(section[key]), key)
    # the environment wins over config.yaml (the gitreins docs: GITREINS_MAX_*)
    if "GITREINS_MAX_TIME" in env:
        want["max_seconds"] = parse_seconds(env["GITREINS_MAX_TIME"])  # type: ignore[assignment]
    for key in ("max_input_tokens", "max_output_tokens"):
        if f"GITREINS_{key.upper()}" in env:
            want[key] = token_cap(env[f"GITREINS_{key.upper()}"], f"GITREINS_{key.upper()}")
    if "GITREINS_MAX_ITERATIONS" in env:
        want["max_iterations"] = parse_iterations(env["GITREINS_MAX_ITERATIONS"])  # type: ignore[assignment]
    return want


def expected_or_error(section: dict[str, Any]) -> dict[str, float] | ConfigError:
    try:
        return expected(section)
    except ConfigError as exc:
        return exc


def bad_token_keys(section: dict[str, Any]) -> list[str]:
    """Every key whose token cap is not a whole number of tokens: a configuration
    error may name any of them (B6)."""
    texts = {k: str(section[k]) for k in ("max_input_tokens", "max_output_tokens") if k in section}
    texts |= {k: v for k, v in section.get("env", {}).items() if k.endswith("_TOKENS")}
    bad = []
    for key, text in texts.items():
        try:
            token_cap(text, key)
        except ConfigError:
            bad.append(key)
    if isinstance(expected_or_error(section), ConfigError) and "cap" in section:
        bad.append("cap")
    return bad


def same_cap(got: float, want: float) -> bool:
    """Equal. Where the text says unlimited the model's value is -1, and the SPEC
    (section 1: "-1 means unlimited") has the cap parse to exactly -1; another
    value <= 0 the model gives (a cap of 0 tokens) is also no cap (B2), so any
    value <= 0 is the same there."""
    if want == -1:
        return got == -1
    return got == want or (got <= 0 and want <= 0)


def in_finding_region(version: str, section: dict[str, Any]) -> str | None:
    for f in findings.registered("gitreins", version):
        if f.scope == "cap-text" and f.in_region(section):
            return f.id
    return None


def cases_per_example() -> int:
    return 25


@settings(max_examples=max(3, settings.default.max_examples // 10))
@example(batch=[{"max_input_tokens": "4.1M"}, {"max_output_tokens": "1.5 k"}, {"max_time": "1.5h"}])
@example(batch=[{"cap": "100/30m/200k/50k"}, {"cap": "100/30m/200k/1m"}])
@example(  # B6: token caps that are not a whole number of tokens, each way of writing one
    batch=[
        {"max_input_tokens": "1.5"},
        {"max_output_tokens": "0.0001k"},
        {"env": {"GITREINS_MAX_INPUT_TOKENS": "2.5"}},
        {"env": {"GITREINS_MAX_OUTPUT_TOKENS": "0.5K"}},
        {"cap": "100/30m/1.5/2k"},
        {"cap": "1.5/2k"},
    ]
)
@example(  # every unit once with a decimal: under a second's whole, and a whole result
    batch=[{"max_time": f"1.5{unit}"} for unit in TIME_UNITS]
    + [{"max_time": f"0.5 {unit}"} for unit in TIME_UNITS]
)
@example(  # every unit of the grammar once, whole numbers
    batch=[{"max_time": f"2{unit}"} for unit in TIME_UNITS]
    + [{"max_time": f"3 {unit}"} for unit in TIME_UNITS]
    + [{"max_input_tokens": f"7{unit}", "max_output_tokens": f"5{unit}"} for unit in TOKEN_UNITS]
    + [{"cap": f"9/4{unit}/8k/6k"} for unit in TIME_UNITS]
)
@example(batch=[{"cap": c} for c in LEGACY_FORMS])
@example(  # each environment override alone, over a config value it replaces
    batch=[
        {"max_time": "10m", "env": {"GITREINS_MAX_TIME": "2h"}},
        {"max_input_tokens": "5k", "env": {"GITREINS_MAX_INPUT_TOKENS": "300k"}},
        {"max_output_tokens": "5k", "env": {"GITREINS_MAX_OUTPUT_TOKENS": "7k"}},
        {"max_iterations": 50, "env": {"GITREINS_MAX_ITERATIONS": "20"}},
        {"max_iterations": 50, "env": {"GITREINS_MAX_ITERATIONS": "0"}},
    ]
)
@example(  # individual keys: numbers and their text, each alone
    batch=[{"max_iterations": v} for v in (50, -1, 0, 2.5, "40", "unlimited")]
    + [{"tool_call_weight": w} for w in (0.25, 1)]
    + [{"max_time": t} for t in ("90s", "15m", "2h")]
    + [{"max_input_tokens": 250_000, "max_output_tokens": "64k"}]
)
@given(batch=st.lists(sections(), min_size=1, max_size=cases_per_example()))
def test_b6_caps_parse_to_what_their_text_says(
    gitreins: GitreinsModules, batch: list[dict[str, Any]]
) -> None:
    version = gitreins.tree.version
    # Only text the model gives a meaning to, outside registered findings.
    batch = [
        s
        for s in batch
        if s
        and in_finding_region(version, s) is None
        and (isinstance(want := expected_or_error(s), ConfigError) or None not in want.values())
    ]
    wrong = []
    for section, got in zip(batch, run_caps(gitreins.tree.root, batch), strict=True):
        want = expected_or_error(section)
        if isinstance(want, ConfigError):
            keys = bad_token_keys(section)
            error = str(got.get("error", ""))
            if not any(k.lower() in error.lower() for k in keys):
                wrong.append(
                    f"{section} -> {got}: not a whole number of tokens, expected a "
                    f"configuration error naming {' or '.join(keys)}"
                )
            continue
        if "error" in got:
            wrong.append(f"{section} -> {got['error']}")
            continue
        diff = {k: (got[k], v) for k, v in want.items() if not same_cap(got[k], v)}
        if diff:
            shown = ", ".join(f"{k}: got {g!r}, text says {w!r}" for k, (g, w) in diff.items())
            wrong.append(f"evaluator: {section} -> {shown}")
    assert not wrong, "B6: caps do not parse to what their text says:\n  " + "\n  ".join(wrong)
