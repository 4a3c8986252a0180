"""S1-S7 and C1: the ledger and the reference model, driven in lockstep.

One :class:`SettlementMachine` creates conversations and sends requests on
every path (``query``, ``responses``, ``streaming_query``,
``responses_stream``), compacted or not, stored or not, continued from a
previous response or not, with shields blocking, writes failing, and streams
ended by their stream end, the interrupt callback or the client's
cancellation, fired in any order and at any chunk. After every step each
conversation is compared with the model item by item (S6); on the way the
rules check C1 (compaction decisions and the explicit input inference got),
S3 (only the first finisher settles: the interrupt callback says whether it
did), S5 (no TurnNotStoredError) and S7 (which requests fail on a failed
write, and that nothing of the turn remains). Before the comparison with the
model, every conversation is held to the settlement's invariants (T1-T4,
``ctxaudit/invariants/settlement.py``), which do not trust the model: each
turn stored once, in the order the requests ended, with the input the user sent, and every
answered request that asked to be stored and whose write did not fail stored. A turn
is appended when its request ends (docs/properties.md, "Order of turns"), so a request
sent while a stream of its conversation is in flight (``request_while_streaming``) and
answered first stands before that stream's turn: T2 reads the order the requests ended,
as this test saw them end. The shape table "ledger: how a request ended × its path"
counts the requests that ended before one sent earlier.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import event as note_event
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
)
from settlement_support import (
    INSTRUCTIONS,
    REFUSAL,
    UNSAFE,
    Loop,
    StreamClient,
    summarize,
)

from ctxaudit import shapes
from ctxaudit.invariants.settlement import check_conversation
from ledger import CompactionConfig, FaultInjectingStore, Ledger, Request, WriteFailedError
from ledger.backends import Script, ScriptedBackend
from ledger.server import InferenceCall, InferenceServer, counting_ids
from ledger.shields import KeywordShield
from model import settlement as model

pytestmark = pytest.mark.properties("S1", "S2", "S3", "S5", "S6", "S7", "S9", "C1")

BLOCKING = ("query", "responses")
STREAMING = ("streaming_query", "responses_stream")

#: the shape coverage this lockstep reports (ctxaudit/shapes.py): each request as it
#: ended, by whether a request of its conversation sent before it was still in flight
ORDER = "ledger: how a request ended × its path"
IN_TURN, OVERTOOK = "after every request sent before it", "before a request sent before it"
shapes.declare(ORDER, ("ended", (IN_TURN, OVERTOOK)), ("path", (*BLOCKING, *STREAMING)))


@dataclass(frozen=True)
class Setup:
    """A compaction configuration; every limit is a whole number of tokens."""

    window: int
    ratio: float
    floor: int
    buffer: int

    @property
    def limit(self) -> int:
        return int(max(self.ratio * self.window, self.floor))


SETUPS = (
    Setup(window=64, ratio=0.5, floor=0, buffer=1),  # ratio side binds (32)
    Setup(window=120, ratio=0.5, floor=80, buffer=0),  # floor binds (80)
    Setup(window=160, ratio=0.5, floor=40, buffer=2),  # ratio side binds (80)
    Setup(window=100, ratio=0.75, floor=75, buffer=1),  # both sides at 75
)


@dataclass(frozen=True)
class Send:
    """How a request is built.

    ``size``: ``short``; ``at_limit`` / ``over_limit``: padded so the estimate
    is exactly the compaction limit / one token over it (when the
    conversation leaves room); ``long``: far over. ``cont``: continue from
    the conversation's last recorded response. ``unsafe``: the text trips the
    shield (which only ``responses`` paths consult). ``fail``: the turn's
    write fails after that many items (only armed when a write happens).
    """

    size: str = "short"
    form: str = "text"
    store: bool = True
    cont: bool = False
    unsafe: bool = False
    chunks: int = 2
    fail: int | None = None


sends = st.builds(
    Send,
    size=st.sampled_from(["short", "at_limit", "over_limit", "long"]),
    form=st.sampled_from(["text", "items", "parts"]),
    store=st.sampled_from([True, True, True, False]),
    cont=st.booleans(),
    unsafe=st.sampled_from([False, False, True]),
    chunks=st.integers(0, 3),  # 0: an answer with no text (a tool call's turn, say)
    fail=st.none() | st.none() | st.integers(0, 2),
)
fails = st.none() | st.none() | st.integers(0, 2)
finisher_orders = st.permutations(["end", "interrupt", "cancel"]).flatmap(
    lambda order: st.sampled_from([tuple(order), tuple(order), tuple(order[:2]), (order[0],)])
)
#: loop rounds to run after letting inference take one step, before the finishers
#: fire (None: until everything is idle); small numbers stop in mid-step
midway = st.none() | st.integers(0, 8)


@dataclass(eq=False)
class Stream:
    """A stream in flight, as the test sees it."""

    name: str
    conv: str
    path: str
    tag: str
    plan: model.Plan
    chunks: tuple[str, ...]
    gate: asyncio.Semaphore
    client: StreamClient
    request_id: str = ""
    blocked: bool = False
    released: int = 0
    received: int = 0
    settled_by: str | None = None
    seen: int = 0

    def __repr__(self) -> str:
        return self.name

    @property
    def terminal(self) -> bool:
        return any(e.type in ("done", "interrupted") for e in self.client.events)


@dataclass
class Tracked:
    plan: model.Plan
    checked_call: bool = False
    calls: list[InferenceCall] = field(default_factory=list)


class SettlementMachine(RuleBasedStateMachine):
    conversations = Bundle("conversations")
    streams = Bundle("streams")

    def __init__(self) -> None:
        super().__init__()
        self.loop = Loop()
        self.numbers = itertools.count(1)
        self.store = FaultInjectingStore(":memory:")
        self.scripts: dict[str, Script] = {}
        self.tracked: dict[str, Tracked] = {}
        #: per conversation, each request's tag and input, in the order sent, and the tags
        #: of the requests whose turn must be stored (T4), for the model-free invariants
        self.sent: dict[str, dict[str, tuple[Any, ...]]] = {}
        self.must: set[str] = set()
        #: per conversation, the tags of its requests in the order they ended (T2), and
        #: of those sent and not yet ended
        self.ended: dict[str, list[str]] = {}
        self.in_flight: dict[str, list[str]] = {}
        self.backend = ScriptedBackend(self._script)
        self.convs: dict[str, tuple[model.Turn, ...]] = {}
        self.last_response: dict[str, str] = {}
        self.open_streams: list[Stream] = []
        self.calls_seen = 0

    # -- set-up ----------------------------------------------------------------

    @initialize(target=conversations, setup=st.sampled_from(SETUPS))
    def configure(self, setup: Setup) -> str:
        """Build the ledger with ``setup`` and open a first conversation."""
        self.setup = setup
        config = CompactionConfig(
            context_window=setup.window,
            threshold_ratio=setup.ratio,
            token_floor=setup.floor,
            buffer_turns=setup.buffer,
        )
        server = InferenceServer(self.store, self.backend, response_ids=counting_ids())
        self.ledger = Ledger(
            self.store,
            server,
            config,
            shield=KeywordShield(UNSAFE, REFUSAL),
            summarizer=summarize,
            instructions=INSTRUCTIONS,
        )
        self.params = model.Params(
            setup.window, setup.ratio, setup.floor, setup.buffer, INSTRUCTIONS, summarize
        )
        return self._open_conversation()

    def _script(self, call: InferenceCall) -> Script:
        tag = last_text(call.input).split(" ")[0]
        self.tracked[tag].calls.append(call)
        return self.scripts[tag]

    # -- building requests -----------------------------------------------------

    def _input(self, tag: str, send: Send, pad: int) -> str | tuple[dict[str, Any], ...]:
        text = tag + (f" {UNSAFE}" if send.unsafe else "") + (" " + "x" * pad if pad else "")
        if send.form == "text":
            return text
        if send.form == "parts":  # the Responses API's content parts, as clients send them
            return (
                {"type": "message", "role": "user", "content": [
                    {"type": "input_text", "text": "context follows"},
                    {"type": "input_text", "text": text},
                ]},
            )  # fmt: skip
        return (
            {"type": "message", "role": "user", "content": "context follows"},
            {"type": "message", "role": "user", "content": text},
        )

    def _padding(self, conv: str, tag: str, send: Send) -> int:
        if send.size == "short":
            return 0
        if send.size == "long":
            return 4 * self.setup.window
        target = self.setup.limit + (1 if send.size == "over_limit" else 0)
        history = [item[2] for item in model.flatten(self.convs[conv])]

        def estimate(pad: int) -> int:
            new = model.input_items(self._input(tag, send, pad))
            return model.estimate(INSTRUCTIONS, history, new)

        if estimate(0) >= target:
            return 0
        pad = max(0, 4 * (target - estimate(0)) - 4)
        while estimate(pad) < target:
            pad += 1
        return pad

    def _new_request(
        self, conv: str, path: str, send: Send
    ) -> tuple[str, Request, model.Plan, tuple[str, ...]]:
        tag = f"q{next(self.numbers)}"
        previous = self.last_response.get(conv) if send.cont else None
        value = self._input(tag, send, self._padding(conv, tag, send))
        request = Request(value, conv, store=send.store, previous_response_id=previous)
        plan = model.plan(
            self.convs,
            model.Request(conv, value, path, send.store, previous),  # type: ignore[arg-type]
            self.params,
        )
        self.tracked[tag] = Tracked(plan)
        self.sent.setdefault(conv, {})[tag] = model.input_items(value)
        self.in_flight.setdefault(conv, []).append(tag)
        chunks = tuple(f"{tag}{letter}" for letter in "abc"[: send.chunks])
        return tag, request, plan, chunks

    def _arm(self, plan: model.Plan, ending: model.Ending, fail: int | None) -> bool:
        """Arm a write failure when ``fail`` asks for one and the ending writes."""
        if fail is None or model.writer(plan, ending) is None:
            return False
        self.store.fail_next_write(after_items=fail)
        return True

    def _settle(self, plan: model.Plan, ending: model.Ending, failing: bool) -> model.Outcome:
        """The request of ``plan`` ended with ``ending`` (its first report), now."""
        conv, tag = plan.request.conversation, request_tag(plan.original_input)
        assert tag is not None
        waiting = self.in_flight[conv]
        overtook = waiting.index(tag) > 0  # one sent before it is still in flight
        waiting.remove(tag)
        self.ended.setdefault(conv, []).append(tag)
        shapes.reached(ORDER, OVERTOOK if overtook else IN_TURN, plan.request.path)
        self.convs, outcome = model.settle(self.convs, plan, ending, write_fails=failing)
        note_event(f"{plan.request.path}: {type(ending).__name__}")
        note_event(f"writer={outcome.writer} compacted={plan.compacted} failed={failing}")
        if plan.request.previous_response_id is not None:
            note_event("continuation")
        assert not self.store.fault_pending, "an armed write failure was not consumed"
        return outcome

    # -- rules -------------------------------------------------------------------

    @rule(target=conversations)
    def new_conversation(self) -> str:
        return self._open_conversation()

    def _open_conversation(self) -> str:
        conv = self.ledger.create_conversation(f"c{next(self.numbers)}")
        self.convs[conv] = ()
        return conv

    @rule(conv=conversations, path=st.sampled_from(BLOCKING), send=sends)
    def blocking_request(self, conv: str, path: str, send: Send) -> None:
        tag, request, plan, chunks = self._new_request(conv, path, send)
        self.scripts[tag] = Script(chunks)
        blocked = send.unsafe and path == "responses"
        ending: model.Ending = model.Blocked(REFUSAL) if blocked else model.Completed(chunks)
        failing = self._arm(plan, ending, send.fail)
        endpoint = self.ledger.query if path == "query" else self.ledger.responses
        if failing:  # S7: the blocking paths fail the request
            with pytest.raises(WriteFailedError):
                self.loop.run(endpoint(request))
        else:
            # S9: compacted or not, the request succeeds and answers the LLM's answer
            where = f"{path} ({'compacted' if plan.compacted else 'not compacted'})"
            try:
                reply = self.loop.run(endpoint(request))
            except Exception as exc:
                if not plan.compacted:
                    raise
                raise AssertionError(f"S9: {where} failed: {exc!r}") from exc
            assert reply.compacted == plan.compacted, "C1: compaction decision differs"
            assert reply.blocked == blocked
            assert list(reply.output) == list(model.output(ending)), (
                f"S9: {where} answered {list(reply.output)!r}, the LLM's answer is "
                f"{list(model.output(ending))!r}"
            )
            # S2: a stored answer's reply names the response the server recorded (what a
            # client continues from); an unstored or blocked one's names none
            named = reply.response_id
            if send.store and not blocked:
                assert named is not None and self.store.response(named) is not None, (
                    f"S2: {where}: a stored answer's reply names no recorded response: {named!r}"
                )
            else:
                assert named is None, f"S2: {where}: the reply names {named!r}, nothing recorded"
            if reply.response_id is not None:
                self.last_response[conv] = reply.response_id
            if send.store and not blocked:
                self.must.add(tag)  # answered, to be stored, its write did not fail
        self._settle(plan, ending, failing)

    @rule(stream=streams, path=st.sampled_from(BLOCKING), send=sends)
    def request_while_streaming(self, stream: Stream, path: str, send: Send) -> None:
        """A blocking request on a stream's conversation, while that stream may still be
        in flight: answered first, its turn stands before the stream's."""
        self.blocking_request(stream.conv, path, send)

    @rule(target=streams, conv=conversations, path=st.sampled_from(STREAMING), send=sends)
    def start_stream(self, conv: str, path: str, send: Send) -> Stream:
        """Open a stream and leave it in flight (later rules move it on)."""
        return self._start(conv, path, send)

    @rule(
        conv=conversations,
        path=st.sampled_from(STREAMING),
        send=sends,
        read=st.integers(0, 3),
        wait=st.booleans(),
        rounds=midway,
        order=finisher_orders,
    )
    def streamed_request(
        self,
        conv: str,
        path: str,
        send: Send,
        read: int,
        wait: bool,
        rounds: int | None,
        order: tuple[str, ...],
    ) -> None:
        """A whole stream: open it, read ``read`` chunks, maybe wait inside, then the race."""
        stream = self._start(conv, path, send)
        for _ in range(min(read, len(stream.chunks))):
            self._pull(stream, release=True)
        if wait:
            self._pull(stream, release=False)
        self.stream_finish(stream, rounds, order, send.fail)
        self.stream_read_to_end(stream)

    def _start(self, conv: str, path: str, send: Send) -> Stream:
        tag, request, plan, chunks = self._new_request(conv, path, send)
        gate = asyncio.Semaphore(0)
        self.scripts[tag] = Script(chunks, gate)
        endpoint = (
            self.ledger.streaming_query
            if path == "streaming_query"
            else self.ledger.responses_stream
        )
        client = StreamClient(self.loop, endpoint(request))
        stream = Stream(f"s_{tag}", conv, path, tag, plan, chunks, gate, client)
        stream.blocked = send.unsafe and path == "responses_stream"
        failing = False
        if stream.blocked:  # the shield settles the turn before anything streams
            failing = self._arm(plan, model.Blocked(REFUSAL), send.fail)
        client.request()
        self.loop.spin(lambda: client.answered >= 1)
        assert client.types() == ["created"], client.types()
        created = client.events[0]
        stream.request_id = created.request_id
        assert created.compacted == plan.compacted, "C1: compaction decision differs"
        if stream.blocked:
            stream.settled_by = "shield"
            self._settle(plan, model.Blocked(REFUSAL), failing)
        self.open_streams.append(stream)
        return stream

    def _pull(self, stream: Stream, *, release: bool) -> None:
        """Ask the client for one more event; optionally let inference take one step."""
        client = stream.client
        if not client.waiting:
            client.request()
        if release:
            self._release(stream, 1)
        self.loop.spin(lambda: not client.waiting)
        self._absorb(stream)

    def _absorb(self, stream: Stream, failing: bool = False) -> None:
        """Account for what happened since last time: events received, inference finished.

        Inference finishing (the backend took its last step) is the stream
        end: the ledger settles the turn in that same step, before the client
        sees ``done``.
        """
        for event in stream.client.events[stream.seen :]:
            stream.seen += 1
            if event.type == "delta":
                assert stream.settled_by is None, f"{stream}: a chunk streamed after settling"
                stream.received += 1
            elif event.type == "done" and not stream.blocked:
                assert stream.settled_by in (None, "end"), (
                    f"{stream}: end after {stream.settled_by}"
                )
                if event.response_id is not None:
                    self.last_response[stream.conv] = event.response_id
            elif event.type == "interrupted":
                assert stream.settled_by in ("interrupt", "cancel"), stream.settled_by
        finished = self.scripts[stream.tag].steps == len(stream.chunks) + 1
        if finished and not stream.blocked:
            assert stream.settled_by in (None, "end"), f"{stream}: inference ran on after settling"
            if stream.settled_by is None:
                stream.settled_by = "end"
                if stream.plan.request.store and not failing:
                    self.must.add(stream.tag)  # answered to its end, to be stored
                self._settle(stream.plan, model.Completed(stream.chunks), failing)

    @rule(stream=streams)
    def stream_next_chunk(self, stream: Stream) -> None:
        """The client reads one more event and inference takes one more step."""
        if stream.client.alive:
            self._pull(stream, release=True)

    @rule(stream=streams)
    def stream_wait(self, stream: Stream) -> None:
        """The client asks for the next event while inference is stalled (it waits inside)."""
        if stream.client.alive:
            self._pull(stream, release=False)

    @rule(stream=streams, rounds=midway, order=finisher_orders, fail=fails)
    def stream_finish(
        self, stream: Stream, rounds: int | None, order: tuple[str, ...], fail: int | None
    ) -> None:
        """Stream end, interrupt callback and cancellation arrive in ``order``.

        With ``rounds`` set, inference first takes one step and the loop runs
        only that many rounds, so the finishers can land in the middle of a
        step. Only the first finisher that finds the turn unsettled settles it
        (S3); ``fail`` makes that one's write fail (S7).
        """
        if rounds is not None and stream.client.alive and not stream.terminal:
            if not stream.client.waiting:
                stream.client.request()
            self._release(stream, 1)
            self.loop.spin(max_rounds=rounds)
            self._absorb(stream)
        finishers = {"end": self._end, "interrupt": self._interrupt, "cancel": self._cancel}
        for name in order:
            finishers[name](stream, fail)

    def _release(self, stream: Stream, steps: int) -> None:
        for _ in range(steps):
            if stream.released < len(stream.chunks) + 1:
                stream.released += 1
                stream.gate.release()

    def _end(self, stream: Stream, fail: int | None) -> None:
        """Inference runs to the end; the client reads up to the final event."""
        client = stream.client
        if not client.alive or stream.terminal:
            return
        failing = False
        if stream.settled_by is None:
            failing = self._arm(stream.plan, model.Completed(stream.chunks), fail)
        self._release(stream, len(stream.chunks) + 1)
        for _ in range(len(stream.chunks) + 4):
            if stream.terminal or not client.alive:
                break
            if not client.waiting:
                client.request()
            self.loop.spin(lambda: not client.waiting)
            self._absorb(stream, failing)
        assert stream.terminal, f"{stream}: no final event ({client.types()}, {client.error!r})"

    def _interrupt(self, stream: Stream, fail: int | None) -> None:
        """The interrupt callback fires (the client hit stop)."""
        registered = stream.client.alive and not stream.blocked
        first = registered and stream.settled_by is None
        ending = model.Interrupted(stream.chunks[: stream.received])
        failing = self._arm(stream.plan, ending, fail) if first else False
        if registered:
            note_event(f"interrupt after {stream.settled_by}")
        settled = self.ledger.interrupt(stream.request_id)
        assert settled == first, f"S3: interrupt settled={settled}, expected {first}"
        if first:
            stream.settled_by = "interrupt"
            self._settle(stream.plan, ending, failing)
        self.loop.spin(lambda: not stream.client.waiting)
        self._absorb(stream)

    def _cancel(self, stream: Stream, fail: int | None) -> None:
        """The client goes away: its task is cancelled (the cancellation handler runs)."""
        client = stream.client
        if not client.alive:
            return
        first = stream.settled_by is None
        ending = model.Cancelled(stream.chunks[: stream.received])
        failing = self._arm(stream.plan, ending, fail) if first else False
        note_event(f"cancel after {stream.settled_by}")
        if client.waiting:
            note_event("cancelled inside the stream's await")
        client.task.cancel()
        self.loop.spin(lambda: client.task.done())
        assert client.task.done()
        assert stream.request_id not in self.ledger.active_streams()
        if first:
            stream.settled_by = "cancel"
            self._settle(stream.plan, ending, failing)
        self._absorb(stream)

    @rule(stream=streams)
    def stream_read_to_end(self, stream: Stream) -> None:
        """The client reads the stream to its end (inference runs to the end if it still can)."""
        client = stream.client
        if not client.alive:
            self._absorb(stream)
            return
        self._release(stream, len(stream.chunks) + 1)
        for _ in range(len(stream.chunks) + 6):
            if not client.alive:
                break
            if not client.waiting:
                client.request()
            self.loop.spin(lambda: not client.waiting)
            self._absorb(stream)
        assert client.finished, f"{stream}: did not end ({client.types()}, {client.error!r})"
        assert stream.request_id not in self.ledger.active_streams()

    # -- invariants -------------------------------------------------------------

    @invariant()
    def streams_healthy(self) -> None:
        for stream in self.open_streams:
            error = stream.client.error
            assert error is None, f"{stream} raised {error!r}"

    @invariant()
    def inference_got_what_c1_says(self) -> None:
        for call in self.backend.calls[self.calls_seen :]:
            tag = last_text(call.input).split(" ")[0]
            plan = self.tracked[tag].plan
            if plan.compacted:
                assert call.conversation is None and call.previous_response_id is None
                assert list(call.input) == list(plan.explicit_input or ()), "explicit input"
            else:
                assert list(call.input) == list(plan.original_input)
                previous = plan.request.previous_response_id
                assert call.previous_response_id == previous
                assert call.conversation == (
                    plan.request.conversation if previous is None else None
                )
        self.calls_seen = len(self.backend.calls)

    @invariant()
    def conversations_keep_the_invariants(self) -> None:
        """T1-T4 on what the ledger stored, without the model."""
        for conv, sent in self.sent.items():
            stored = [(i.turn, i.kind, i.content) for i in self.store.items(conv)]
            ended = self.ended.get(conv, [])
            broken = check_conversation(stored, sent, request_tag, self.must, ended=ended)
            assert not broken, f"S6 ({conv}): " + "; ".join(broken)

    @invariant()
    def conversations_match_model(self) -> None:
        """S6: every conversation, item by item."""
        assert not self.store.fault_pending
        for conv, turns in self.convs.items():
            stored = [(i.turn, i.kind, i.content) for i in self.store.items(conv)]
            expected = model.flatten(turns)
            assert stored == expected, _diff(conv, stored, expected)

    def teardown(self) -> None:
        self.loop.close()
        self.store.close()


def last_text(items: Any) -> str:
    """The text of a request's last message: its content, or its last content part's."""
    content = items[-1].get("content", "") if items else ""
    if isinstance(content, list):
        content = content[-1].get("text", "") if content else ""
    return str(content)


def request_tag(items: Any) -> str | None:
    """The tag (``q<n>``) a request's input starts its last message with."""
    head = last_text(items).split(" ")[0]
    return head if head.startswith("q") and head[1:].isdigit() else None


#: the most rows of a conversation an S6 message shows, from just before the first difference
DIFF_ROWS = 16
_COLUMN = 46


def _diff(conv: str, stored: list[Any], expected: list[Any]) -> str:
    """The conversation the model expects and the one the ledger holds, side by
    side, item by item (turn, kind, content), the first differing item marked ``>>``
    and every other differing one ``!=``."""
    count = max(len(stored), len(expected))

    def cell(items: list[Any], index: int) -> str:
        if index >= len(items):
            return "-"
        turn, kind, content = items[index]
        text = repr(content)
        if len(text) > 24:
            text = f"{text[:16]}...({len(str(content))} chars)"
        return f"t{turn} {kind} {text}"

    differ = [i for i in range(count) if stored[i : i + 1] != expected[i : i + 1]]
    first = differ[0] if differ else count
    lines = [
        f"S6: conversation {conv} differs from the model at item {first}: the model expects "
        f"{len(expected)} item(s), the ledger holds {len(stored)}",
        f"     {'#':>3}  {'model (expected)':<{_COLUMN}} ledger (holds)",
    ]
    start = max(0, first - 2)
    if start:
        lines.append(f"         (items 0-{start - 1} are the same)")
    for index in range(start, min(count, start + DIFF_ROWS)):
        want, got = cell(expected, index), cell(stored, index)
        mark = ">>" if index == first else "!=" if index in differ else "  "
        lines.append(f"  {mark} {index:>3}  {want:<{_COLUMN}} {got}")
    if count > start + DIFF_ROWS:
        lines.append(f"         ({count - start - DIFF_ROWS} more item(s) not shown)")
    return "\n".join(lines)


TestSettlement = SettlementMachine.TestCase


def test_s6_message_shows_both_conversations_and_marks_the_first_difference() -> None:
    expected = [(1, "input", "q1"), (1, "output", "q1a"), (2, "input", "q2")]
    stored = [(1, "input", "q1"), (1, "output", "q1a"), (1, "output", "q1a"), (2, "input", "q2")]
    lines = _diff("c1", stored, expected).splitlines()
    assert lines[0] == (
        "S6: conversation c1 differs from the model at item 2: the model expects 3 item(s), "
        "the ledger holds 4"
    )
    assert "model (expected)" in lines[1] and "ledger (holds)" in lines[1]
    first = [ln for ln in lines if ln.lstrip().startswith(">>")]
    assert len(first) == 1 and "t2 input 'q2'" in first[0] and "t1 output 'q1a'" in first[0]
    assert [ln.split()[1] for ln in lines if ln.lstrip().startswith("!=")] == ["3"]
