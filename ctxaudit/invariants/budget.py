"""The budget's invariants: what a meter of calls and tokens may do within a run.

A budget meter counts a run's calls and the tokens they bill against caps the user
set. Whatever the harness or its rules of counting, a user expects of it:

- BI1 *counters never go back*: within a run no counter decreases. The one exception
  is a context reset (B5): it sets the token meters to zero and leaves the call count
  and the tool calls alone (they span the run).
- BI2 *billed once, metered once*: an accepted call adds exactly the tokens it
  reported and its cost to the call count; a step that makes no call changes no
  counter; a run meters exactly the tokens of the requests it made and one tool call
  per tool that ran.
- BI3 *no call past a cap*: no call is made while the call count is at its cap (nor,
  where the harness refuses calls over a token cap, once the tokens billed are over it);
  no tool runs once a response took a meter over its cap; a tool batch that would
  take the tool calls past their cap is refused.
- BI4 *a refusal changes nothing*: a call the meter refuses, or a run refused
  before its first request, changes no counter.
- BI5 *a reached cap is reported, and only a reached one*: after a call (or a check)
  that leaves a token or time cap reached, the meter reports a cap; a run that went
  over a token cap does not complete; every cap reported is reached.

The checks take what a lockstep observed of the target (counters, the caps it was
configured with, what it reported), never the model.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Literal, NamedTuple

if TYPE_CHECKING:  # the caps' configuration only (what a value <= 0 means), never the model
    from model.config import Caps

#: the caps, named as the lockstep names what a target reports (``model.budget.Cap``'s values)
CALLS, TIME, INPUT, OUTPUT, TOTAL = "iterations", "time", "input", "output", "total"
REQUEST_INPUT, TOOL_CALLS = "request-input", "tool-calls"
#: the caps checked after a call (reported once reached); the call and tool-call caps
#: are checked before one (they refuse it)
HARD = frozenset({TIME, INPUT, OUTPUT, TOTAL, REQUEST_INPUT})
TOKEN_METERS = ("input", "output", "cache_read", "cache_write")
COUNTERS = ("calls", *TOKEN_METERS, "tool_calls")
EPSILON = 1e-9  # a call count is a float where tool calls cost a fraction of a call


class Meters(NamedTuple):
    """What a meter shows (or, for a step's usage, what one call adds)."""

    calls: float = 0.0  # what the call cap counts (gitreins: the iteration credit)
    input: int = 0  # input tokens, cached ones included
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    tool_calls: int = 0
    request_input: int = 0  # the last call's input: a gauge, not a counter (no BI1)


class Limits(NamedTuple):
    """The caps a user configured; None: no cap."""

    calls: float | None = None
    input: int | None = None
    output: int | None = None
    total: int | None = None
    request_input: int | None = None
    tool_calls: int | None = None
    seconds: float | None = None
    at_cap: bool = True  # a token meter at its cap has reached it (False: only past it)
    refuse_over: bool = False  # a call is refused while a token cap is reached

    def reached(self, m: Meters, elapsed: float | None = None) -> frozenset[str]:
        """The caps reached by ``m`` (``elapsed``: seconds since the clock started;
        None: it has not)."""
        found = set()
        if self.calls is not None and m.calls >= self.calls - EPSILON:
            found.add(CALLS)
        if self.seconds is not None and elapsed is not None and elapsed >= self.seconds:
            found.add(TIME)
        tokens = {
            INPUT: (m.input, self.input),
            OUTPUT: (m.output, self.output),
            TOTAL: (m.input + m.output, self.total),
            REQUEST_INPUT: (m.request_input, self.request_input),
        }
        for cap, (meter, limit) in tokens.items():
            if limit is not None and (meter >= limit if self.at_cap else meter > limit):
                found.add(cap)
        return frozenset(found)

    def refusing(self, m: Meters) -> frozenset[str]:
        """The caps that refuse a call made with the meter at ``m``."""
        over = self.reached(m) & {CALLS, INPUT, OUTPUT, TOTAL}
        return over if self.refuse_over else over & {CALLS}


def limits_of(caps: Caps) -> Limits:
    """The caps of a configuration, as a user reads them (B2, B3: a value <= 0 is no
    cap, unless the harness documents 0 as a cap)."""

    def cap(value: float) -> float | None:
        return value if caps.capped(value) else None

    return Limits(
        calls=cap(caps.max_iterations),
        input=_int(cap(caps.max_input_tokens)),
        output=_int(cap(caps.max_output_tokens)),
        total=_int(cap(caps.max_total_tokens)),
        request_input=_int(cap(caps.max_request_input_tokens)),
        tool_calls=_int(cap(caps.max_tool_calls)),
        seconds=caps.max_seconds if caps.max_seconds > 0 else None,
        at_cap=caps.at_cap,
        refuse_over=caps.refuse_over_cap,
    )


def _int(value: float | None) -> int | None:
    return None if value is None else int(value)


class Step(NamedTuple):
    """One operation on a meter: a call with what it reported (``usage.calls``: its
    cost; ``usage.request_input``: its input as one request), a tool call (its cost),
    a batch of ``usage.tool_calls`` tool calls checked together, a check, a move of
    the clock, or a context reset."""

    kind: Literal["call", "tool", "batch", "check", "clock", "reset"]
    usage: Meters = Meters()


def _decreased(before: Meters, after: Meters, names: Sequence[str]) -> list[str]:
    return [
        f"{n} {getattr(before, n)} -> {getattr(after, n)}"
        for n in names
        if getattr(after, n) < getattr(before, n) - EPSILON
    ]


def _differs(want: Meters, got: Meters) -> list[str]:
    return [
        f"{n} {getattr(got, n)} (expected {getattr(want, n)})"
        for n in (*COUNTERS, "request_input")
        if abs(getattr(got, n) - getattr(want, n)) > EPSILON
    ]


def check_step(
    before: Meters,
    after: Meters,
    step: Step,
    limits: Limits,
    *,
    refused: bool,
    reported: frozenset[str],
    elapsed: float | None = None,
) -> list[str]:
    """The invariants one step on a meter breaks: ``before`` and ``after`` are what the
    meter showed, ``refused`` whether the target said it refused the call, ``reported``
    the caps it reported (empty: none), ``elapsed`` the clock after the step (None: not
    started)."""
    broken: list[str] = []
    reported = frozenset(str(c) for c in reported)  # a str enum's value, not its repr
    calling = step.kind in ("call", "tool", "batch")
    if step.kind == "reset":
        kept = _decreased(before, after, ("calls", "tool_calls"))
        left = [f"{n} {getattr(after, n)}" for n in TOKEN_METERS if getattr(after, n) != 0]
        if kept or left:
            broken.append(
                "BI1: a context reset must zero the token meters and keep the call count: "
                f"{', '.join(kept + left)}"
            )
        return broken
    went_back = _decreased(before, after, COUNTERS)
    if went_back:
        broken.append(f"BI1: a counter went back in a {step.kind} step: {', '.join(went_back)}")
    if refused or not calling:
        changed = _differs(before, after)
        if changed:
            what = f"a refused {step.kind}" if refused else f"a {step.kind} step (no call)"
            which = "BI4" if refused else "BI2"
            broken.append(f"{which}: {what} changed the meter: {', '.join(changed)}")
    else:
        u = step.usage
        want = before._replace(
            calls=before.calls + u.calls,
            input=before.input + u.input,
            output=before.output + u.output,
            cache_read=before.cache_read + u.cache_read,
            cache_write=before.cache_write + u.cache_write,
            tool_calls=before.tool_calls + u.tool_calls,
            request_input=u.request_input if step.kind == "call" else before.request_input,
        )
        wrong = _differs(want, after)
        if wrong:
            broken.append(
                f"BI2: an accepted {step.kind} did not meter exactly what it reported "
                f"({_usage(u)}): {', '.join(wrong)}"
            )
    if calling and not refused:
        if step.kind == "batch":
            limit = limits.tool_calls
            if limit is not None and before.tool_calls + step.usage.tool_calls > limit:
                broken.append(
                    f"BI3: a batch of {step.usage.tool_calls} tool call(s) was accepted with "
                    f"{before.tool_calls} run, past the cap of {limit}"
                )
        else:
            caps = limits.refusing(before)
            if step.kind == "tool":  # a tool call is refused by the call cap only
                caps &= {CALLS}
            if caps:
                broken.append(
                    f"BI3: a {step.kind} was accepted with {_at(before, caps)}, already at "
                    f"the cap ({', '.join(sorted(caps))})"
                )
    if refused and not reported:
        broken.append(f"BI5: a refused {step.kind} reported no cap")
    reached = limits.reached(after, elapsed)
    if step.kind == "batch" and refused:
        reached |= {TOOL_CALLS}
    unreached = sorted(set(reported) - reached)
    if unreached:
        broken.append(f"BI5: cap(s) {unreached} reported, not reached ({_at(after, unreached)})")
    if step.kind in ("call", "tool", "check") and not reported and reached & HARD:
        broken.append(
            f"BI5: cap(s) {sorted(reached & HARD)} reached after a {step.kind} "
            f"({_at(after, reached & HARD)}), none reported"
        )
    return broken


def _usage(u: Meters) -> str:
    return ", ".join(f"{n} {getattr(u, n)}" for n in u._fields if getattr(u, n))


def _at(m: Meters, caps: Collection[str]) -> str:
    fields = {CALLS: "calls", INPUT: "input", OUTPUT: "output", TOOL_CALLS: "tool_calls",
              REQUEST_INPUT: "request_input"}  # fmt: skip
    shown = [f"{fields[c]} {getattr(m, fields[c])}" for c in sorted(caps) if c in fields]
    if TOTAL in caps:
        shown.append(f"total {m.input + m.output}")
    return ", ".join(shown) or "the clock"


class Request(NamedTuple):
    """One request a run made, with what it billed."""

    input: int
    output: int


def check_run(
    before: Meters,
    seen: Sequence[Meters],
    after: Meters,
    limits: Limits,
    *,
    requests: Sequence[Request],
    tools_run: int,
    stopped_on: str | None,
) -> list[str]:
    """The invariants one run on a meter breaks, observed at its ends and as each tool
    ran: ``seen`` the meter at each tool call (its ``tool_calls`` not observed: left as
    ``before``'s), ``requests`` the requests made, ``stopped_on`` the cap the run said
    it stopped on (None: it completed)."""
    broken: list[str] = []
    shown = ("calls", "input", "output")
    path = [before, *seen, after]
    went_back = [d for a, b in zip(path, path[1:], strict=False) for d in _decreased(a, b, shown)]
    went_back += _decreased(before, after, ("tool_calls",))
    if went_back:
        broken.append(f"BI1: a counter went back during a run: {', '.join(went_back)}")
    billed = Meters(input=sum(r.input for r in requests), output=sum(r.output for r in requests))
    metered = Meters(input=after.input - before.input, output=after.output - before.output)
    if metered != billed or after.tool_calls - before.tool_calls != tools_run:
        broken.append(
            f"BI2: the run metered {metered.input} input, {metered.output} output token(s) "
            f"and {after.tool_calls - before.tool_calls} tool call(s); its {len(requests)} "
            f"request(s) billed {billed.input} and {billed.output}, and {tools_run} tool(s) ran"
        )
    if after.calls - before.calls > len(requests) + EPSILON:
        broken.append(
            f"BI2: the run counted {after.calls - before.calls:g} call(s) for "
            f"{len(requests)} request(s)"
        )
    refusing = limits.refusing(before)
    if refusing and requests:
        broken.append(
            f"BI3: the run made {len(requests)} request(s) with {_at(before, refusing)}, "
            f"already at the cap ({', '.join(sorted(refusing))})"
        )
    billed_so_far = before
    for k, r in enumerate(requests[:-1]):  # each request another one followed
        billed_so_far = billed_so_far._replace(
            input=billed_so_far.input + r.input, output=billed_so_far.output + r.output
        )
        over = limits.refusing(billed_so_far) - {CALLS}  # the call cap counts responses
        if over:
            broken.append(
                f"BI3: request {k + 2} was made after the ones before it billed "
                f"{_at(billed_so_far, over)}, over the cap ({', '.join(sorted(over))})"
            )
            break
    if limits.calls is not None and after.calls > max(before.calls, limits.calls) + EPSILON:
        broken.append(f"BI3: the call count {after.calls:g} passed its cap {limits.calls:g}")
    tool_cap = limits.tool_calls
    if tool_cap is not None and after.tool_calls > max(before.tool_calls, tool_cap):
        broken.append(
            f"BI3: {after.tool_calls} tool call(s) run, past the cap of {limits.tool_calls}"
        )
    for i, m in enumerate(seen):
        over = limits.reached(m) & {INPUT, OUTPUT, TOTAL}
        if over:
            broken.append(
                f"BI3: tool call {i + 1} ran with {_at(m, over)}, over the cap "
                f"({', '.join(sorted(over))}): the response that took it there did not stop the run"
            )
            break
    if not requests and after != before:
        changed = ", ".join(_differs(before, after))
        broken.append(f"BI4: a run refused before its first request changed the meter: {changed}")
    over = limits.reached(after) & {INPUT, OUTPUT, TOTAL}
    if stopped_on is None and over:
        broken.append(
            f"BI5: the run completed with {_at(after, over)}, over the cap "
            f"({', '.join(sorted(over))})"
        )
    if stopped_on is not None and not _stops(stopped_on, after, limits, requests):
        broken.append(
            f"BI5: the run stopped on the {stopped_on} cap, which is not reached "
            f"({_at(after, [stopped_on])}; request inputs {[r.input for r in requests]})"
        )
    return broken


def _stops(cap: str, after: Meters, limits: Limits, requests: Sequence[Request]) -> bool:
    """Whether a run may say it stopped on ``cap``: it is reached (a per-request cap:
    by one of the requests made; the tool-call cap: it is set, the batch it refused
    is not observed)."""
    if cap == REQUEST_INPUT:
        limit = limits.request_input
        return limit is not None and any(
            (r.input >= limit if limits.at_cap else r.input > limit) for r in requests
        )
    if cap == TOOL_CALLS:
        return limits.tool_calls is not None
    return cap in limits.reached(after)


def check_loop(
    before: Meters | None, now: Meters, limits: Limits, *, calling: bool, compacted: bool
) -> list[str]:
    """The invariants a loop that meters its own calls breaks, seen at each LLM call it
    makes (``calling``) and at its end: ``before`` the meter at the previous one (None:
    none yet), ``now`` the meter as this call is made (or the run ended),
    ``compacted`` whether the conversation was reset since (the token meters start
    again; the call count never does)."""
    broken: list[str] = []
    if before is not None:
        names = ("calls", "tool_calls") if compacted or not calling else COUNTERS
        went_back = _decreased(before, now, names)
        if went_back:
            broken.append(f"BI1: a counter went back between two calls: {', '.join(went_back)}")
    over = limits.reached(now) & {CALLS, INPUT, OUTPUT, TOTAL} if calling else frozenset()
    if over:
        broken.append(
            f"BI3: the LLM was called with {_at(now, over)}, already at the cap "
            f"({', '.join(sorted(over))})"
        )
    return broken


#: the property each invariant counts against (docs/properties.md, "Invariants")
PROPERTY = {"BI1": "B1", "BI2": "B1", "BI3": "B3", "BI4": "B3", "BI5": "B2"}


def report(broken: Sequence[str], what: str) -> str:
    """An assertion message for the invariants ``broken`` by ``what``, opening with the
    properties they count against (as every failure of a suite does, so that a report
    attributes it): a reset's (BI1) is B5's, a time cap's (BI5) is B4's, a call count
    metered wrong (BI2) is B3's."""
    props: list[str] = []
    for line in broken:
        prop = PROPERTY[line.split(":")[0]]
        if line.startswith("BI1") and "context reset" in line:
            prop = "B5"
        elif line.startswith("BI5") and "'time'" in line:
            prop = "B4"
        elif line.startswith("BI2") and all(
            f.startswith(("calls ", "tool_calls ")) for f in line.rsplit("): ", 1)[-1].split(", ")
        ):
            prop = "B3"  # only the call count is wrong
        props += [prop] if prop not in props else []
    return f"{'/'.join(props)}: {what} broke the budget's invariants:\n" + "\n".join(broken)
