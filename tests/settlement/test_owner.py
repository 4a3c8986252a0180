"""The settlement owner on its own: S1-S5 and S7, against a real in-memory store."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger.items import assistant_message, refusal_message, summary_marker, user_message
from ledger.owner import Outcome, PendingTurn, TurnNotStoredError
from ledger.store import FaultInjectingStore, WriteFailedError

pytestmark = pytest.mark.properties("S1", "S2", "S3", "S4", "S5", "S7")

ORIGINAL = [user_message("what is 2+2?")]
EXPLICIT = [summary_marker(1, 1, "earlier"), user_message("what is 2+2?")]
MARKER = summary_marker(1, 1, "earlier")


@pytest.fixture
def store() -> FaultInjectingStore:
    s = FaultInjectingStore()
    s.create_conversation("c")
    return s


def stored(store: FaultInjectingStore) -> list[tuple[str, dict[str, object]]]:
    return [(item.kind, item.content) for item in store.items("c")]


def owner(store: FaultInjectingStore, **kwargs: object) -> PendingTurn:
    defaults: dict[str, object] = dict(store_turn=True, server_has_conversation=False)
    defaults.update(kwargs)
    sent = defaults.pop("sent", ORIGINAL)
    return PendingTurn(store, "c", sent, **defaults)  # type: ignore[arg-type]


# -- S4 ------------------------------------------------------------------------


def test_s4_compacted_owner_without_original_input_is_refused(store: FaultInjectingStore) -> None:
    with pytest.raises(ValueError, match="original input"):
        owner(store, sent=EXPLICIT, compacted=True)


def test_s4_uncompacted_owner_needs_no_hand_over(store: FaultInjectingStore) -> None:
    pending = owner(store)
    assert (pending.settled, pending.outcome, pending.written) == (False, None, False)
    pending.report_completed([assistant_message("4")])
    assert (pending.settled, pending.outcome, pending.written) == (True, Outcome.COMPLETED, True)
    assert stored(store) == [("input", ORIGINAL[0]), ("output", assistant_message("4"))]


def test_s4_an_uncompacted_turn_stores_what_was_sent(store: FaultInjectingStore) -> None:
    """The hand-over is a compacted request's (S4): an uncompacted owner stores the
    input the server was sent, whatever else it is handed."""
    pending = owner(store, original_input=[user_message("not this")])
    pending.report_completed([assistant_message("4")])
    assert stored(store) == [("input", ORIGINAL[0]), ("output", assistant_message("4"))]


# -- S5 ------------------------------------------------------------------------


def test_s5_error_is_not_a_runtime_error() -> None:
    assert not issubclass(TurnNotStoredError, RuntimeError)
    assert issubclass(TurnNotStoredError, Exception)


def test_s5_unsettled_compacted_turn_raises_at_the_end(store: FaultInjectingStore) -> None:
    pending = owner(store, sent=EXPLICIT, compacted=True, original_input=ORIGINAL)
    with pytest.raises(TurnNotStoredError):
        pending.finish()


def test_s5_settled_compacted_turn_finishes_quietly(store: FaultInjectingStore) -> None:
    pending = owner(store, sent=EXPLICIT, compacted=True, original_input=ORIGINAL)
    pending.report_completed([assistant_message("4")])
    pending.finish()


def test_s5_applies_to_compacted_requests_only(store: FaultInjectingStore) -> None:
    owner(store).finish()


# -- S1 and S2 -------------------------------------------------------------------

CASES = [
    # store, server has the conversation, outcome -> owner writes
    (True, True, Outcome.COMPLETED, False),  # the server stored it
    (True, True, Outcome.BLOCKED, True),
    (True, True, Outcome.INTERRUPTED, True),
    (True, False, Outcome.COMPLETED, True),  # compacted or continued
    (True, False, Outcome.BLOCKED, True),
    (True, False, Outcome.INTERRUPTED, True),
    (False, True, Outcome.COMPLETED, False),
    (False, True, Outcome.INTERRUPTED, False),
    (False, False, Outcome.COMPLETED, False),
    (False, False, Outcome.BLOCKED, False),
]


def report(pending: PendingTurn, outcome: Outcome) -> bool:
    if outcome is Outcome.COMPLETED:
        return pending.report_completed([assistant_message("done")])
    if outcome is Outcome.BLOCKED:
        return pending.report_blocked("no")
    return pending.report_interrupted(["do", "ne"])


@pytest.mark.parametrize(("store_turn", "server_has", "outcome", "writes"), CASES)
def test_s1_owner_writes_exactly_when_store_and_not_server(
    store: FaultInjectingStore, store_turn: bool, server_has: bool, outcome: Outcome, writes: bool
) -> None:
    pending = owner(store, store_turn=store_turn, server_has_conversation=server_has)
    assert report(pending, outcome)
    assert pending.written == writes
    assert bool(stored(store)) == writes


def test_s2_compacted_turn_stores_marker_and_original_input(store: FaultInjectingStore) -> None:
    pending = owner(store, sent=EXPLICIT, compacted=True, original_input=ORIGINAL, summary=MARKER)
    pending.report_completed([assistant_message("4")])
    assert stored(store) == [
        ("summary", MARKER),
        ("input", ORIGINAL[0]),
        ("output", assistant_message("4")),
    ]


def test_s2_outputs_of_each_ending(store: FaultInjectingStore) -> None:
    owner(store).report_blocked("refused")
    owner(store).report_interrupted(["par", "tial"])
    owner(store).report_interrupted([])
    outputs = [(i.turn, i.kind, i.content) for i in store.items("c") if i.kind == "output"]
    assert outputs == [
        (1, "output", refusal_message("refused")),
        (2, "output", assistant_message("partial", status="incomplete")),
    ]
    assert [i.turn for i in store.items("c") if i.kind == "input"] == [1, 2, 3]


# -- S3 ------------------------------------------------------------------------


@given(
    reports=st.lists(st.sampled_from(list(Outcome)), min_size=1, max_size=5),
    store_turn=st.booleans(),
    server_has=st.booleans(),
)
def test_s3_first_report_settles_and_later_ones_do_nothing(
    reports: list[Outcome], store_turn: bool, server_has: bool
) -> None:
    s = FaultInjectingStore()
    s.create_conversation("c")
    pending = owner(s, store_turn=store_turn, server_has_conversation=server_has)
    results = [report(pending, outcome) for outcome in reports]
    assert results == [True] + [False] * (len(reports) - 1)
    assert pending.outcome is reports[0]
    turns = {item.turn for item in s.items("c")}
    first_writes = store_turn and not (server_has and reports[0] is Outcome.COMPLETED)
    assert turns == ({1} if first_writes else set())


# -- S7 ------------------------------------------------------------------------


@pytest.mark.parametrize("after_items", [0, 1, 2, 5])
def test_s7_failed_write_stores_nothing_and_stays_settled(
    store: FaultInjectingStore, after_items: int
) -> None:
    pending = owner(store, sent=EXPLICIT, compacted=True, original_input=ORIGINAL, summary=MARKER)
    store.fail_next_write(after_items=after_items)
    with pytest.raises(WriteFailedError):
        pending.report_completed([assistant_message("4")])
    assert stored(store) == []
    assert pending.settled and not pending.written
    assert not pending.report_interrupted(["4"])
    assert stored(store) == []
    pending.finish()  # settled: a failed write is not a lost settlement
