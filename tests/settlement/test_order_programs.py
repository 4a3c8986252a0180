"""Turns of one conversation that overlap, as seed-free programs (S6, T2).

A turn is appended to its conversation when its request ends, as the inference server
does (docs/properties.md, "Order of turns": OGX appends a turn when its response
completes, observed by ``tests/lightspeed/inenv/test_server_order.py``). So a request
sent while a stream of the same conversation is in flight, and answered first, stands
before that stream's turn; it was also answered over the conversation without it.

The first program is the interleaving issue #47 reported (found by a search under
another Hypothesis, which the ``ci`` profile never drew then): two blocking queries, a
stream started, another blocking query, the stream read to its end. Its turns stand
q1, q2, q4, q3 in the ledger and in the model, and T2 holds when it reads the order the
requests ended; read as the order they were sent, it would call the same store out of
order (the last assertion: the check can fail).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from settlement_support import INSTRUCTIONS, summarize

from ctxaudit.invariants.settlement import check_conversation
from ledger import CompactionConfig, ConversationStore, Ledger, Request
from ledger.backends import ScriptedBackend
from ledger.server import InferenceServer, counting_ids
from ledger.service import StreamEvent
from model import settlement as model

pytestmark = pytest.mark.properties("S6")

WINDOW = 10_000  # no request here is compacted


def tag_of(items: Any) -> str | None:
    head = str(items[-1].get("content", "")).split(" ")[0] if items else ""
    return head or None


def _answer(call: Any) -> list[str]:
    return [f"{call.input[-1]['content']} answered"]


@pytest.mark.parametrize("stream_path", ["streaming_query", "responses_stream"])
@pytest.mark.parametrize("query_path", ["query", "responses"])
def test_a_query_answered_while_a_stream_is_in_flight_stands_before_it(
    stream_path: str, query_path: str
) -> None:
    store = ConversationStore()
    backend = ScriptedBackend(_answer)
    server = InferenceServer(store, backend, response_ids=counting_ids())
    config = CompactionConfig(context_window=WINDOW, threshold_ratio=0.5, buffer_turns=1)
    ledger = Ledger(store, server, config, summarizer=summarize, instructions=INSTRUCTIONS)
    conv = ledger.create_conversation("c")
    params = model.Params(WINDOW, 0.5, 0, 1, INSTRUCTIONS, summarize)
    convs: dict[str, tuple[model.Turn, ...]] = {conv: ()}

    def blocking(text: str) -> Any:
        endpoint = ledger.query if query_path == "query" else ledger.responses
        return endpoint(Request(text, conv))

    def plan(text: str, path: str) -> model.Plan:
        return model.plan(convs, model.Request(conv, text, path), params)  # type: ignore[arg-type]

    def settle(plan: model.Plan, text: str) -> None:
        nonlocal convs
        convs, _ = model.settle(convs, plan, model.Completed((f"{text} answered",)))

    async def program() -> list[str]:
        ended: list[str] = []
        for text in ("q1", "q2"):
            p = plan(text, query_path)
            await blocking(text)
            settle(p, text)
            ended.append(text)
        p3 = plan("q3", stream_path)
        opener = ledger.streaming_query if stream_path == "streaming_query" else (
            ledger.responses_stream
        )  # fmt: skip
        stream: AsyncIterator[StreamEvent] = opener(Request("q3", conv))
        first = await anext(stream)  # the stream has started; its inference has not ended
        assert first.type == "created", first
        p4 = plan("q4", query_path)
        await blocking("q4")  # answered while q3 is in flight
        settle(p4, "q4")
        ended.append("q4")
        async for _ in stream:  # q3 read to its end
            pass
        settle(p3, "q3")
        ended.append("q3")
        return ended

    ended = asyncio.run(program())
    stored = [(i.turn, i.kind, i.content) for i in store.items(conv)]
    assert stored == model.flatten(convs[conv])
    assert [tag_of([c]) for _, kind, c in stored if kind == "input"] == ["q1", "q2", "q4", "q3"]
    # q4 was answered over the conversation as it stood: without q3's turn
    q4_call = next(c for c in backend.calls if c.input[-1]["content"] == "q4")
    history = [tag_of([c]) for c in q4_call.history if c.get("role") == "user"]
    assert q4_call.conversation == conv and history == ["q1", "q2"], history
    sent = {tag: model.input_items(tag) for tag in ("q1", "q2", "q3", "q4")}
    assert check_conversation(stored, sent, tag_of, set(sent), ended=ended) == []
    assert check_conversation(stored, sent, tag_of, set(sent), ended=list(sent)) == [
        "T2: turns out of the order they ended: ['q1', 'q2', 'q4', 'q3'], "
        "ended ['q1', 'q2', 'q3', 'q4']"
    ]


def test_two_compactions_in_flight_fold_each_turn_once() -> None:
    """Two compacted requests in flight at once both plan to fold the same turn: a
    stream (q4) and a query answered meanwhile (q5). q5 ends first and stores its
    marker; q4's would fold that turn again, so it stores none (T5), and the next request
    (q6) is sent each summary once. Before the rule, the ledger and the model agreed on
    two markers of turn 2, and q6 was sent turn 2's summary twice."""
    store = ConversationStore()
    backend = ScriptedBackend(lambda call: [f"{str(call.input[-1]['content'])[:2]} answered"])
    server = InferenceServer(store, backend, response_ids=counting_ids())
    config = CompactionConfig(context_window=200, threshold_ratio=0.5, buffer_turns=1)
    ledger = Ledger(store, server, config, summarizer=summarize, instructions=INSTRUCTIONS)
    conv = ledger.create_conversation("c")
    params = model.Params(200, 0.5, 0, 1, INSTRUCTIONS, summarize)
    convs: dict[str, tuple[model.Turn, ...]] = {conv: ()}

    def settle(plan: model.Plan) -> None:
        nonlocal convs
        tag = str(plan.original_input[-1]["content"])[:2]
        convs, _ = model.settle(convs, plan, model.Completed((f"{tag} answered",)))

    async def program() -> None:
        for text in ("q1 " + "x" * 60, "q2 " + "x" * 60, "q3 " + "x" * 60):
            p = model.plan(convs, model.Request(conv, text, "query"), params)
            await ledger.query(Request(text, conv))
            settle(p)
        p4 = model.plan(convs, model.Request(conv, "q4 " + "y" * 40, "streaming_query"), params)
        stream = ledger.streaming_query(Request("q4 " + "y" * 40, conv))
        assert (await anext(stream)).type == "created"
        p5 = model.plan(convs, model.Request(conv, "q5 " + "z" * 40, "query"), params)
        assert p4.new_marker is not None and p5.new_marker == p4.new_marker  # the same fold
        await ledger.query(Request("q5 " + "z" * 40, conv))
        settle(p5)
        async for _ in stream:
            pass
        settle(p4)
        p6 = model.plan(convs, model.Request(conv, "q6", "query"), params)
        await ledger.query(Request("q6", conv))
        settle(p6)

    asyncio.run(program())
    stored = [(i.turn, i.kind, i.content) for i in store.items(conv)]
    assert stored == model.flatten(convs[conv])
    ranges = [(c["first_turn"], c["last_turn"]) for _, kind, c in stored if kind == "summary"]
    assert ranges == [(1, 1), (2, 2), (3, 4)], ranges
    q6 = next(c for c in backend.calls if c.input[-1]["content"] == "q6")
    summaries = [(x["first_turn"], x["last_turn"]) for x in q6.input if x.get("type") == "summary"]
    assert summaries == [(1, 1), (2, 2), (3, 4)], summaries
