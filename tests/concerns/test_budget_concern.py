"""The budget concern's shared lockstep (``ctxaudit/concerns/budget.py``) on a small
meter written here from the properties alone (B1-B3: calls and tokens against caps,
a cap at its value reached): it holds on the meter as written, fails on each planted
break with the property it breaks, and never draws a rule whose capability the meter
does not declare."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, settings

from ctxaudit.concerns.budget import Call
from ctxaudit.invariants.budget import Meters
from ctxaudit.locksteps.budget import make_machine, run_lockstep
from model.config import Caps

#: the examples of one run: enough to reach the caps the strategies aim at
QUICK = settings(
    max_examples=60, stateful_step_count=20, derandomize=True, database=None, deadline=None,
    suppress_health_check=list(HealthCheck),
)  # fmt: skip


@dataclasses.dataclass
class Meter:
    """Calls and tokens against caps, no tool calls, no clock, no reset: a cap <= 0
    is none, a token cap is reached at its value and reported after the call that
    reached it, and a call is refused once the calls are at their cap."""

    caps: Caps
    breaks: frozenset[str] = frozenset()
    calls: float = 0.0
    input: int = 0
    output: int = 0

    def _capped(self, value: float) -> bool:
        return value > 0

    def start(self, now: float) -> None:
        pass

    def record_call(self, call: Call, now: float) -> str | None:
        cap = self.caps.max_iterations
        at_cap = self.calls > cap if "call at the cap" in self.breaks else self.calls >= cap
        if self._capped(cap) and at_cap:
            return "iterations"
        self.calls += 1.0
        self.input += call.prompt + call.cache_read + call.cache_write
        if "output unmetered" not in self.breaks:
            self.output += call.completion
        for name, used, limit in (
            ("input", self.input, self.caps.max_input_tokens),
            ("output", self.output, self.caps.max_output_tokens),
        ):
            reached = used > limit if "cap past its value" in self.breaks else used >= limit
            if self._capped(limit) and reached:
                return name
        return None

    def record_tool_call(self, now: float) -> str | None:
        raise AssertionError("a tool call drawn for a meter without tool calls")

    def check(self, now: float) -> str | None:
        raise AssertionError("a check drawn for a meter that declares none")

    def reset(self) -> None:
        raise AssertionError("a reset drawn for a meter that declares none")

    def meters(self) -> Meters:
        return Meters(self.calls, self.input, self.output)


@dataclasses.dataclass
class Adapter:
    breaks: frozenset[str] = frozenset()
    name: str = "the test's meter"
    capabilities: frozenset[str] = frozenset()

    def meter(self, caps: Caps) -> Meter:
        return Meter(caps, self.breaks)


def test_the_meter_as_written_holds() -> None:
    run_lockstep(Adapter(), QUICK)


@pytest.mark.parametrize(
    ("brk", "prop"),
    [("call at the cap", "B3"), ("cap past its value", "B2"), ("output unmetered", "B1")],
)
def test_each_planted_break_fails_with_its_property(brk: str, prop: str) -> None:
    """The invariants, which do not trust the model, see each break first."""
    with pytest.raises(AssertionError) as failed:
        run_lockstep(Adapter(frozenset({brk})), QUICK)
    assert str(failed.value).startswith(f"{prop}: the test's meter broke"), failed.value


def test_a_capability_no_lockstep_knows_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown capabilities"):
        make_machine(Adapter(capabilities=frozenset({"streaming"})))


def test_an_adapter_that_cannot_be_built_is_could_not_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A target's adapter that fails to import or to build (the harness's package, not
    ctxaudit's frames) checks nothing: could not check, never a finding about it."""
    from types import SimpleNamespace

    from ctxaudit import targets
    from ctxaudit.outcomes import CouldNotCheck, could_not_check
    from ctxaudit.targets import concern_suites

    kind = SimpleNamespace(
        concerns={"budget": "no_such_module_of_a_harness:Budget"}, resolve=lambda spec: None
    )
    monkeypatch.setattr(targets, "get", lambda name: kind)
    config = SimpleNamespace(getoption=lambda name: "toy" if "target" in name else "")
    with pytest.raises(CouldNotCheck) as raised:
        concern_suites.adapter(config, "budget")  # type: ignore[arg-type]
    assert "ModuleNotFoundError" in str(raised.value)
    assert could_not_check(raised.value) is not None
