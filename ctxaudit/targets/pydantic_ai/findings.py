"""pydantic-ai findings: where a release breaks a property. The one reviewed place.

Each is a :class:`~ctxaudit.targets.base.ReleaseFinding` over the lockstep's call
(:class:`Call`): the property, the releases, the doc line it breaks, the narrowest region
where it shows and the regression test that asserts it still reproduces.

``CTXAUDIT_FINDINGS`` overrides the registry for one run (the audit uses it): ``all``
or a comma-separated list of ids (``none``: none).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctxaudit.targets.base import ReleaseFinding, first_in_region, registered_for

if TYPE_CHECKING:  # an installed ctxaudit imports only ctxaudit; the model is read by the suites
    from model.budget import Budget

NAME = "pydantic-ai"
FINDINGS_TESTS = "tests/pydantic_ai/inenv/test_findings.py"
RELEASES = frozenset({"2.21.0", "2.40.0", "2.68.0"})


@dataclass(frozen=True)
class Call:
    """A lockstep step, as a region reads it: the model before one model response."""

    before: Budget
    inputs: tuple[int, ...]  # the input tokens of each request of the response
    outputs: tuple[int, ...]  # and its output tokens

    def prefix_passes(self, requests: int) -> bool:
        """Whether the response's first ``requests`` requests take a cumulative token
        meter past its limit."""
        from model.budget import Cap

        b = self.before
        for i, o in zip(self.inputs[:requests], self.outputs[:requests], strict=True):
            b = b.metered(i, o, 0, 0)
        return bool(b.hard_caps(0.0) & {Cap.INPUT, Cap.OUTPUT, Cap.TOTAL})


Finding = ReleaseFinding[Call]


def _test(name: str) -> str:
    return f"{FINDINGS_TESTS}::{name}"


def _chain_sum_passes(call: Call) -> bool:
    cap = call.before.caps.max_request_input_tokens
    return (
        call.before.caps.capped(cap)
        and len(call.inputs) > 1
        and sum(call.inputs) > cap >= call.inputs[-1]
        and not call.before.refusing()
    )


def _continued(call: Call) -> bool:
    return len(call.inputs) > 1 and not call.before.refusing()


FINDINGS: tuple[Finding, ...] = (
    Finding(
        "PAI-PER-REQUEST-READS-CHAIN-SUM",
        RELEASES,
        "B2",
        "per_request_input_tokens_limit is compared with the sum of the input tokens of "
        "every request of a continued response (a pause_turn or background chain), so a "
        "chain of small requests stops the run although no request was over the limit",
        "UsageLimits.per_request_input_tokens_limit: 'this limit is checked against each "
        "request's input token count independently' (2.21.0-2.68.0); 2.68.0 adds 'For a "
        "response whose usage sums several model requests, it is checked against the input "
        "tokens of the one that measures the context'",
        "a continued response whose requests' summed input passes the per-request limit "
        "while its last request's does not",
        _chain_sum_passes,
        _test("test_pai_per_request_reads_chain_sum"),
    ),
    Finding(
        "PAI-PRECHECK-SKIPS-OUTPUT",
        RELEASES,
        "B3",
        "the check before a request reads the request, input and total limits but not "
        "output_tokens_limit: a run whose usage is already past its output limit (usage "
        "carried in, a delegate sharing ctx.usage) sends and pays for one more request",
        "UsageLimits.check_before_request: 'Raises a UsageLimitExceeded exception if the "
        "next request would exceed any of the limits' (2.21.0-2.68.0)",
        "a request made while the output meter, and no other, is past its limit",
        lambda call: call.before.refusing() == {"output"},  # {Cap.OUTPUT}: a str enum
        _test("test_pai_precheck_skips_output"),
    ),
    Finding(
        "PAI-STOPPED-CHAIN-UNMETERED",
        frozenset({"2.21.0", "2.40.0"}),
        "B1",
        "a continued response stopped by a token limit between its requests is dropped "
        "with its usage: the tokens of the requests already made (and billed) are not in "
        "the run's usage, so the pool a later run or a parent checks is short of them",
        "RunUsage: 'LLM usage associated with an agent run'; _check_continuation_usage "
        "(2.21.0, 2.40.0) checks a provisional copy 'so a runaway continuation can't blow the "
        "budget' and the total is committed only with the final response; 2.68.0 commits "
        "'the partial merged response when the request raises (this check included)'",
        "a continued response some of whose requests take a token meter past its limit",
        lambda call: (
            _continued(call) and any(call.prefix_passes(k) for k in range(1, len(call.inputs) + 1))
        ),
        _test("test_pai_stopped_chain_unmetered"),
    ),
    Finding(
        "PAI-FIRST-SEGMENT-UNCHECKED",
        frozenset({"2.21.0"}),
        "B3",
        "the first request of a continued response is not checked against the token limits: "
        "its continuation is requested although the first request already took a meter "
        "past its limit",
        "UsageLimits.check_before_request: 'Raises a UsageLimitExceeded exception if the "
        "next request would exceed any of the limits'; the token limits 'are checked after "
        "each response' (2.21.0: 'checked before each request to the model')",
        "a continued response whose first request takes a token meter past its limit",
        lambda call: _continued(call) and call.prefix_passes(1),
        _test("test_pai_first_segment_unchecked"),
    ),
)

BY_ID = {f.id: f for f in FINDINGS}


def registered(version: str) -> list[Finding]:
    """The findings registered for a release (``CTXAUDIT_FINDINGS`` overrides)."""
    return registered_for(FINDINGS, version)


def left_out(version: str, call: Call) -> str | None:
    """The registered finding whose region ``call`` is in, if any."""
    return first_in_region(registered(version), call)
