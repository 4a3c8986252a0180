"""Hypothesis' ``note`` and ``event`` for a state machine's rules, which the seed-free
fixed programs also run outside a Hypothesis test (where both would raise)."""

from __future__ import annotations

import hypothesis
from hypothesis.control import currently_in_test_context


def note(message: str) -> None:
    if currently_in_test_context():
        hypothesis.note(message)


def event(message: str) -> None:
    if currently_in_test_context():
        hypothesis.event(message)
