"""Example-based checks of the request paths, one behaviour each (readable regressions)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from ledger import CompactionConfig, FaultInjectingStore, Ledger, Request, WriteFailedError
from ledger.backends import ScriptedBackend
from ledger.owner import PendingTurn, TurnNotStoredError
from ledger.server import InferenceServer, UnknownResponseError, counting_ids
from ledger.service import StreamEvent
from ledger.shields import KeywordShield
from ledger.store import UnknownConversationError

pytestmark = pytest.mark.properties("S1", "S6", "S7")


def make_ledger(window: int = 10_000) -> tuple[Ledger, FaultInjectingStore, ScriptedBackend]:
    store = FaultInjectingStore()
    backend = ScriptedBackend(lambda call: ["an", "swer"])
    server = InferenceServer(store, backend, response_ids=counting_ids())
    config = CompactionConfig(context_window=window, threshold_ratio=0.5, buffer_turns=1)
    ledger = Ledger(store, server, config, shield=KeywordShield("forbidden"))
    return ledger, store, backend


async def collect(stream: AsyncIterator[StreamEvent]) -> list[str]:
    return [event.type async for event in stream]


def turns(store: FaultInjectingStore, conv: str) -> list[list[str]]:
    grouped: dict[int, list[str]] = {}
    for item in store.items(conv):
        grouped.setdefault(item.turn, []).append(item.kind)
    return list(grouped.values())


@pytest.mark.parametrize("path", ["query", "responses", "streaming_query", "responses_stream"])
def test_lcore_3883_conversation_keeps_growing_after_compaction(path: str) -> None:
    ledger, store, _ = make_ledger(window=60)
    conv = ledger.create_conversation("c")

    async def send(text: str) -> None:
        request = Request(text, conv)
        if path == "query":
            await ledger.query(request)
        elif path == "responses":
            await ledger.responses(request)
        elif path == "streaming_query":
            await collect(ledger.streaming_query(request))
        else:
            await collect(ledger.responses_stream(request))

    for n in range(5):
        asyncio.run(send(f"question {n}"))
    shapes = turns(store, conv)
    assert len(shapes) == 5
    assert shapes[0] == ["input", "output"]
    assert shapes[-1] == ["summary", "input", "output"]


def test_store_false_stores_nothing_anywhere() -> None:
    ledger, store, _ = make_ledger(window=60)
    conv = ledger.create_conversation("c")
    for n in range(4):
        asyncio.run(ledger.query(Request(f"q{n}", conv, store=False)))
        asyncio.run(ledger.responses(Request("forbidden", conv, store=False)))
        asyncio.run(collect(ledger.streaming_query(Request(f"s{n}", conv, store=False))))
    assert store.items(conv) == []


def test_continuation_is_stored_once_by_the_owner() -> None:
    ledger, store, backend = make_ledger()
    conv = ledger.create_conversation("c")
    first = asyncio.run(ledger.query(Request("first", conv)))
    assert first.response_id is not None
    asyncio.run(ledger.query(Request("second", conv, previous_response_id=first.response_id)))
    assert turns(store, conv) == [["input", "output"], ["input", "output"]]
    call = backend.calls[-1]
    assert call.conversation is None and call.previous_response_id == first.response_id
    assert [item["content"] for item in call.history] == ["first", "answer"]


def test_unknown_ids_fail_before_anything_is_stored() -> None:
    ledger, store, _ = make_ledger()
    conv = ledger.create_conversation("c")
    with pytest.raises(UnknownResponseError):
        asyncio.run(ledger.query(Request("x", conv, previous_response_id="resp_404")))
    with pytest.raises(UnknownConversationError):
        asyncio.run(ledger.query(Request("x", "nope")))
    assert store.items(conv) == []


def test_s7_blocking_fails_streaming_ends_normally() -> None:
    ledger, store, _ = make_ledger()
    conv = ledger.create_conversation("c")
    store.fail_next_write()
    with pytest.raises(WriteFailedError):
        asyncio.run(ledger.query(Request("x", conv)))
    store.fail_next_write()
    assert asyncio.run(collect(ledger.streaming_query(Request("y", conv)))) == [
        "created",
        "delta",
        "delta",
        "done",
    ]
    assert store.items(conv) == []
    assert not store.fault_pending


def test_interrupt_of_unknown_stream_is_ignored() -> None:
    ledger, _, _ = make_ledger()
    assert ledger.interrupt("req_404") is False


# -- S5 at the end of every handler --------------------------------------------
#
# Each path reports how its turn ended, then its handler ends with the S5 check.
# With the report gone (the LCORE-3883 clean-up, simulated by an owner whose
# reports do nothing), every handler of a compacted request must raise
# TurnNotStoredError instead of ending quietly.

LOST_REPORTS = {
    "query": "report_completed",
    "responses": "report_completed",
    "responses blocked": "report_blocked",
    "streaming_query": "report_completed",
    "responses_stream": "report_completed",
    "responses_stream blocked": "report_blocked",
    "streaming_query interrupted": "report_interrupted",
}


@pytest.mark.properties("S5")
@pytest.mark.parametrize("path", sorted(LOST_REPORTS))
def test_s5_every_handler_end_catches_a_lost_report(
    path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger, store, _ = make_ledger(window=20)  # every request is compacted
    conv = ledger.create_conversation("c")
    monkeypatch.setattr(PendingTurn, LOST_REPORTS[path], lambda self, *args: False)
    text = "forbidden question" if "blocked" in path else "a question long enough"
    request = Request(text, conv)

    async def interrupted() -> None:
        stream = ledger.streaming_query(request)
        created = await anext(stream)
        assert created.compacted
        assert (await anext(stream)).type == "delta"
        ledger.interrupt(created.request_id)
        assert (await anext(stream)).type == "interrupted"
        await anext(stream)  # the handler ends here

    run = {
        "query": lambda: ledger.query(request),
        "responses": lambda: ledger.responses(request),
        "responses blocked": lambda: ledger.responses(request),
        "streaming_query": lambda: collect(ledger.streaming_query(request)),
        "responses_stream": lambda: collect(ledger.responses_stream(request)),
        "responses_stream blocked": lambda: collect(ledger.responses_stream(request)),
        "streaming_query interrupted": interrupted,
    }[path]
    with pytest.raises(TurnNotStoredError):
        asyncio.run(run())
    assert store.items(conv) == []
