"""S3 races, swept deterministically: a finisher lands after every number of loop rounds.

The stateful machine explores these races too, but which mid-step moments it
hits depends on the examples Hypothesis draws. Here every moment of the last
inference step is tried in turn: the client asks for the next event, the
backend is allowed to finish, the loop runs ``rounds`` rounds (so inference
may be not started, mid-step, finished but not yet relayed, or relayed), and
then the interrupt callback or the cancellation handler fires, possibly
followed by the other one. Whatever the moment, exactly one finisher settles
the turn (S3), no chunk reaches the client after the turn settled, inference
never runs on after another finisher, and the conversation holds exactly the
model's turn (S6).
"""

from __future__ import annotations

import asyncio
import itertools

import pytest
from settlement_support import INSTRUCTIONS, Loop, StreamClient, summarize

from ledger import CompactionConfig, ConversationStore, Ledger, Request
from ledger.backends import Script, ScriptedBackend
from ledger.server import InferenceServer, counting_ids
from model import settlement as model

pytestmark = pytest.mark.properties("S3", "S6")

CHUNKS = ("one ", "two ", "three")
#: loop rounds after the last step was allowed; None: the step is never allowed before
#: the finishers (inference stalls inside the backend, the client waits for it)
ROUNDS: tuple[int | None, ...] = (None, *range(0, 9))


def sweep() -> list[tuple[str, ...]]:
    orders = [("interrupt", ""), ("cancel", ""), ("interrupt", "cancel"), ("cancel", "interrupt")]
    return [(a, b, mode) for a, b in orders for mode in ("server", "compacted", "continued")]


@pytest.mark.parametrize(("first", "second", "mode"), sweep())
def test_finisher_at_every_moment_of_the_last_step(first: str, second: str, mode: str) -> None:
    for rounds, before in itertools.product(ROUNDS, (0, 1, len(CHUNKS))):
        _one(first, second, mode, rounds, before)


def _one(first: str, second: str, mode: str, rounds: int | None, before: int) -> None:
    loop = Loop()
    store = ConversationStore()
    gate = asyncio.Semaphore(0)
    script = Script(CHUNKS, gate)
    backend = ScriptedBackend(lambda call: script if call.input[-1]["content"] == "now" else ["ok"])
    server = InferenceServer(store, backend, response_ids=counting_ids())
    window = 24 if mode == "compacted" else 10_000
    config = CompactionConfig(context_window=window, threshold_ratio=0.5, buffer_turns=0)
    ledger = Ledger(store, server, config, summarizer=summarize, instructions=INSTRUCTIONS)
    params = model.Params(window, 0.5, 0, 0, INSTRUCTIONS, summarize)
    conv = ledger.create_conversation("c")
    convs: dict[str, tuple[model.Turn, ...]] = {conv: ()}
    previous = None
    if mode != "compacted":  # one earlier turn, stored by the server
        earlier = loop.run(ledger.query(Request("earlier", conv)))
        plan = model.plan(convs, model.Request(conv, "earlier", "query"), params)
        convs, _ = model.settle(convs, plan, model.Completed(("ok",)))
        previous = earlier.response_id if mode == "continued" else None
    where = f"{first}+{second or '-'} {mode} rounds={rounds} before={before}"

    client = StreamClient(
        loop, ledger.streaming_query(Request("now", conv, previous_response_id=previous))
    )
    plan = model.plan(convs, model.Request(conv, "now", "streaming_query", True, previous), params)
    client.request()
    loop.spin(lambda: client.answered >= 1)
    created = client.events[0]
    assert created.compacted == plan.compacted, where
    for _ in range(before):  # some chunks streamed before the last step
        client.request()
        gate.release()
        loop.spin(lambda: not client.waiting)
    # the last moment: everything inference needs is allowed, the loop runs `rounds` rounds
    client.request()
    if rounds is None:
        loop.spin()
    else:
        for _ in range(len(CHUNKS) + 1):
            gate.release()
        loop.spin(max_rounds=rounds)

    finished = script.steps == len(CHUNKS) + 1  # the stream end ran inside that step
    settled_by = "end" if finished else None
    received = [e.text for e in client.events if e.type == "delta"]
    for name in (first, second):
        if not name:
            continue
        if name == "interrupt":
            settled = ledger.interrupt(created.request_id)
            expect = settled_by is None and client.alive
            assert settled == expect, f"{where}: interrupt settled={settled}"
            if settled:
                settled_by = "interrupt"
        elif client.alive:
            client.task.cancel()
            loop.spin(lambda: client.task.done())
            assert client.task.done(), where
            if settled_by is None:
                settled_by = "cancel"
        loop.spin()
        received_now = [e.text for e in client.events if e.type == "delta"]
        if settled_by in ("interrupt", "cancel"):
            assert received_now == received, f"{where}: a chunk was relayed after {settled_by}"
    # inference may not go on once another finisher settled, even when it could
    steps = script.steps
    for _ in range(len(CHUNKS) + 1):
        gate.release()
    loop.spin()
    if settled_by != "end":
        assert script.steps == steps, f"{where}: inference ran on after {settled_by}"
    # read to the end, if the client is still there
    for _ in range(len(CHUNKS) + 4):
        if not client.alive:
            break
        if not client.waiting:
            client.request()
        loop.spin(lambda: not client.waiting)
    loop.spin()
    assert not client.alive and client.error is None, f"{where}: {client.error!r}"
    if settled_by != "end":
        assert script.steps == steps, f"{where}: inference ran on after {settled_by}"
    types = [e.type for e in client.events]
    if client.finished:  # read to its end: the final event names the finisher
        final = {"end": "done", "interrupt": "interrupted"}[settled_by or "end"]
        assert types[-1] == final, f"{where}: {types}"

    if settled_by is None:  # the client went away before anything else: cancellation
        settled_by = "cancel"
    ending: model.Ending
    if settled_by == "end":
        ending = model.Completed(CHUNKS)
    elif settled_by == "interrupt":
        ending = model.Interrupted(tuple(received))
    else:
        ending = model.Cancelled(tuple(received))
    convs, _ = model.settle(convs, plan, ending)
    stored = [(i.turn, i.kind, i.content) for i in store.items(conv)]
    assert stored == model.flatten(convs[conv]), f"{where}: settled by {settled_by}\n{stored}"
    loop.close()
    store.close()


@pytest.mark.parametrize("finisher", ["interrupt", "cancel"])
def test_finisher_before_the_first_pull(finisher: str) -> None:
    """The moment the sweep above never meets: the client holds the ``created`` event and
    has not asked for the next one, so no inference step was pulled yet. The interrupt
    callback (or the client going away: ``aclose`` at the stream's first ``yield``) settles
    the turn with nothing streamed (S3), inference never runs, the stream ends cleanly and
    the conversation holds the model's turn (S6). The stateful machine meets this moment
    only under some seeds (a removed ``self._pull = None`` survived seed 12)."""
    loop = Loop()
    store = ConversationStore()
    gate = asyncio.Semaphore(0)
    script = Script(CHUNKS, gate)
    backend = ScriptedBackend(lambda call: script)
    server = InferenceServer(store, backend, response_ids=counting_ids())
    config = CompactionConfig(context_window=10_000, threshold_ratio=0.5, buffer_turns=0)
    ledger = Ledger(store, server, config, summarizer=summarize, instructions=INSTRUCTIONS)
    params = model.Params(10_000, 0.5, 0, 0, INSTRUCTIONS, summarize)
    conv = ledger.create_conversation("c")
    convs: dict[str, tuple[model.Turn, ...]] = {conv: ()}
    client = StreamClient(loop, ledger.streaming_query(Request("now", conv)))
    plan = model.plan(convs, model.Request(conv, "now", "streaming_query", True, None), params)
    client.request()
    loop.spin(lambda: client.answered >= 1)
    assert client.types() == ["created"] and not client.waiting
    ending: model.Ending
    if finisher == "interrupt":
        assert ledger.interrupt(client.events[0].request_id) is True
        ending = model.Interrupted(())
    else:
        client.task.cancel()
        loop.spin(lambda: client.task.done())
        assert client.task.cancelled(), f"the stream did not close cleanly: {client.task!r}"
        ending = model.Cancelled(())
    for _ in range(len(CHUNKS) + 1):
        gate.release()
    loop.spin()
    for _ in range(3):  # read to the end, if the client is still there
        if not client.alive:
            break
        client.request()
        loop.spin(lambda: not client.waiting)
    loop.spin()
    assert not client.alive and client.error is None, repr(client.error)
    assert script.steps == 0, f"inference ran {script.steps} steps after the {finisher}"
    if finisher == "interrupt":
        assert client.types() == ["created", "interrupted"] and client.finished
    convs, _ = model.settle(convs, plan, ending)
    stored = [(i.turn, i.kind, i.content) for i in store.items(conv)]
    assert stored == model.flatten(convs[conv]), stored
    loop.close()
    store.close()
