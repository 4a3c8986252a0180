"""toymeter's target for ctxaudit: its budget adapter, and nothing else.

ctxaudit's shared budget lockstep drives the meter through the adapter, beside its
reference model; the meter writes no test of its own.
"""

from pathlib import Path

from ctxaudit.concerns.budget import Call
from ctxaudit.invariants.budget import Meters
from ctxaudit.properties import applying
from ctxaudit.targets.base import BaseTarget, Described, MutationScope, Resolved
from ctxaudit.targets.concern_suites import suites_for
from toymeter.meter import TokenMeter

HOME = Path(__file__).parent
CAPS = {"calls": "iterations", "input": "input", "output": "output"}  # the lockstep's names


class Meter:
    def __init__(self, caps):
        self.meter = TokenMeter(int(caps.max_iterations), caps.max_input_tokens,
                                caps.max_output_tokens)  # fmt: skip

    def start(self, now):
        pass  # no clock

    def record_call(self, call: Call, now):
        return CAPS.get(self.meter.record(call.prompt, call.completion))

    def meters(self):
        return Meters(self.meter.calls, self.meter.input, self.meter.output)


class Budget:
    name = "TokenMeter"
    capabilities = frozenset()  # no tool calls, time cap, cache tokens, check or reset

    def __init__(self, resolved):
        pass

    def meter(self, caps):
        return Meter(caps)


class Target(BaseTarget):
    name = "toymeter"
    properties = applying("B1", "B2", "B3")
    concerns = {"budget": "toymeter.ctxaudit_target:Budget"}
    suites = suites_for(concerns)
    spec_forms = "'toymeter'"
    mutation = MutationScope("toymeter", "toymeter", config=HOME / "mutation.toml")

    def resolve(self, spec=None, repo=None):
        return Resolved(self.name, "1.0", HOME.parent, self.name, copy_dir="toymeter")

    def expand(self, spec, repo=None):
        return [Described(self.name, self.name, "1.0")]


TARGET = Target()
