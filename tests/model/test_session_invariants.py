"""The session model (``model/session.py``, openai-agents' compaction session) held to what
a user states without knowing its algorithm, for every contract its parameters allow:

- a compaction's call is sent a run of the newest stored items, in order (the whole
  history where the contract's scope is the whole, or the model was shown all of it; a
  manual call: the whole history), and the history afterwards is what it did not
  cover, in order, then the call's output: nothing is removed that the call was not
  sent;
- the hook approves exactly when the candidates reach the threshold (or the call is
  forced), counted over what the call is sent;
- a failed call changes nothing; an item another writer appends while the call is in
  flight is never lost.

No target is involved: where the model breaks one of these, the model is wrong.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given
from hypothesis import strategies as st

from model import session
from model.session import Contract

KINDS = ("u", "a", "t", "CMP")


@st.composite
def items(draw: st.DrawFn, prefix: str, max_size: int = 14) -> list[str]:
    kinds = draw(st.lists(st.sampled_from(KINDS), max_size=max_size))
    return [f"{k}:{prefix}{n}" for n, k in enumerate(kinds)]


@st.composite
def histories(draw: st.DrawFn) -> tuple[Contract, list[str]]:
    """A contract and a stored history, the window often shorter than the history (the
    shape where what is sent and what is replaced can differ)."""
    stored = draw(items("h"))
    shorter = stored and draw(st.sampled_from([True, True, True, False]))
    window = draw(st.integers(0, len(stored) - 1) if shorter else st.none() | st.integers(0, 16))
    contract = Contract(
        window=window,
        threshold=draw(st.integers(1, 6)),
        scope=draw(st.sampled_from(["whole", "suffix"])),
    )
    return contract, stored


def summarize(covered: Sequence[str]) -> list[str]:
    return [f"CMP:{len(covered)}:{'|'.join(covered)}"]


def _is_newest_run(covered: Sequence[str], stored: Sequence[str]) -> bool:
    return list(stored[len(stored) - len(covered) :]) == list(covered)


@given(histories(), items("n", 6), st.booleans(), items("late", 2))
def test_an_automatic_compaction_replaces_exactly_what_it_was_sent(
    history: tuple[Contract, list[str]], turn: list[str], fails: bool, late: list[str]
) -> None:
    c, before = history
    got = session.run(c, before, turn, summarize, compact_fails=fails, late=late)
    stored = [*before, *turn]
    if got.compacted is None:
        assert list(got.stored) == stored  # no call: the turn is stored, nothing else
        assert len(session.candidates(session.snapshot(c, before, turn))) < c.threshold
        return
    covered = list(got.compacted)
    assert _is_newest_run(covered, stored)
    if c.scope == "whole" or c.window is None or c.window >= len(before):
        assert covered == stored  # the whole history, as documented (or all of it shown)
    assert len(session.candidates(covered)) >= c.threshold  # the hook approved it
    if fails or late:  # nothing changes, and the late items are kept
        assert list(got.stored) == [*stored, *late]
        return
    kept = stored[: len(stored) - len(covered)]
    assert list(got.stored) == [*kept, *summarize(covered)]


@given(histories(), st.booleans(), st.booleans())
def test_a_manual_compaction_replaces_exactly_what_it_was_sent(
    history: tuple[Contract, list[str]], force: bool, fails: bool
) -> None:
    c, stored = history
    got = session.manual(c, stored, summarize, force, compact_fails=fails)
    if got.compacted is None:
        assert list(got.stored) == stored and got.answered
        assert not force and len(session.candidates(stored)) < c.threshold
        return
    covered = list(got.compacted)
    assert _is_newest_run(covered, stored)
    assert force or len(session.candidates(covered)) >= c.threshold
    if fails:  # the call raised: nothing changes
        assert list(got.stored) == stored and not got.answered
        return
    assert list(got.stored) == summarize(covered)
    assert covered == stored  # nothing replaced that the call was not sent
