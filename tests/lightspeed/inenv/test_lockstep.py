"""S1-S3, S6, S7, S9 and C1: a lightspeed-stack tree and the reference model in lockstep.

The tree's real app serves every request over HTTP, OGX stores what it
stores, and only the LLM is fake. The same ``model/settlement.py`` that
checks the ledger predicts, request by request, what every conversation
holds and what the LLM is sent. After each request the rule compares:

- the response: HTTP status and the LLM's answer, compacted or not (S9);
- what the fake LLM was sent: the conversation replayed by OGX, or the
  explicit compacted input (C1: the decision, the summaries, the recent
  turns, the new input);
- every conversation, item by item, as OGX lists it (S1, S2, S6).

How tokens are counted is the tree's own (its ``estimate_tokens``), counting
what the model says a request sends; what a summary says is the fake LLM's
deterministic answer (:func:`harness.summarize`). Both are inputs of the model.

Trees before LCORE-3908 have no turn owner: S4, S5 and S8 are not checked here.

A2A (``a2a``: ``message/send``, ``a2a_stream``: ``message/stream``) is sent
where the tree serves ``/a2a``, and compared as every other path is; its
requests are text only and end completed, with no failed write (S7 does not say
what an A2A task does then). A conversation that an A2A message starts has no
owner in the tree's database and its /v1 endpoints refuse it, so it continues
over A2A only; one started elsewhere is joined through a mapped context
(``harness.Service.a2a``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context
from hypothesis.stateful import Bundle, RuleBasedStateMachine, initialize, precondition, rule

from ctxaudit import profiles, shapes
from ctxaudit.targets.lightspeed import harness
from ctxaudit.targets.lightspeed.fake_llm import Reply
from ctxaudit.targets.lightspeed.findings import Finding, Situation
from ctxaudit.targets.lightspeed.harness import INSTRUCTIONS
from ctxaudit.targets.lightspeed.wire import ItemView, Response, message_view
from model import settlement as model
from tests.lightspeed.inenv import service
from tests.lightspeed.inenv.report import shown_by, side_by_side

pytestmark = pytest.mark.properties("S1", "S2", "S3", "S6", "S7", "S9", "C1")


def note_event(text: str) -> None:
    """Hypothesis' event statistics; the fixed programs run outside a test."""
    if currently_in_test_context():
        event(text)


PATHS = ("query", "streaming_query", "responses", "responses_stream", "a2a", "a2a_stream")
#: the A2A endpoint's paths (message/send, message/stream), where the tree serves /a2a
A2A = ("a2a", "a2a_stream")
STREAMED = ("streaming_query", "responses_stream")
SHIELDED = ("responses", "responses_stream")
#: what makes the tree's own input check block a request (its sanitization of
#: markup that could inject tool calls), so no shield has to be configured
BLOCKED_WORD = " <system>"
INTERRUPT = "/v1/streaming_query/interrupt"
ENDPOINT = {
    "query": "/v1/query",
    "streaming_query": "/v1/streaming_query",
    "responses": "/v1/responses",
    "responses_stream": "/v1/responses",
    "a2a": "/a2a",
    "a2a_stream": "/a2a",
}

#: the shape coverage this lockstep reports (ctxaudit/shapes.py): each request sent
#: outside the known findings' regions counts in each of its kinds, on its path, and in
#: each pair of its kinds. A kind the path's API does not take is not counted there;
#: what the strategies leave out (a hang-up of a blocking request or of an A2A stream, a
#: failing write on A2A) stays a cell at 0: a gap, named in the report
KINDS_BY_PATH = "lightspeed-stack: the request kind × the path"
KIND_PAIRS = "lightspeed-stack: two kinds in one request"
#: what a request can carry or how it can end, besides a short completed stored one
KINDS = (
    "at the limit", "compacted", "store=false", "continued", "write fails",
    "blocked", "interrupted", "hung up", "hung up, then interrupted",
)  # fmt: skip
PLAIN = "plain: short, completed, stored"
ENDINGS = ("blocked", "interrupted", "hung up", "hung up, then interrupted")
INTERRUPTED = ("interrupted", "hung up, then interrupted")
NO_STORE_FLAG = "only /v1/responses takes store and previous_response_id"
ONLY_STREAMING_QUERY = "the tree's interrupt endpoint stops a /v1/streaming_query only"
shapes.declare(
    KINDS_BY_PATH,
    ("kind", (PLAIN, *KINDS)),
    ("path", PATHS),
    absent={
        **{(k, p): NO_STORE_FLAG for k in ("store=false", "continued") for p in PATHS
           if p not in ("responses", "responses_stream")},
        **{(k, p): ONLY_STREAMING_QUERY for k in INTERRUPTED for p in PATHS
           if p != "streaming_query"},
    },
)  # fmt: skip
shapes.declare(
    KIND_PAIRS,
    ("kind", KINDS),
    ("with", KINDS),
    absent={
        **{(a, b): "each pair is counted once, right of the diagonal"
           for i, a in enumerate(KINDS) for b in KINDS[: i + 1]},
        **{(a, b): "a request ends one way" for i, a in enumerate(ENDINGS)
           for b in ENDINGS[i + 1 :]},
        **{(a, b): ONLY_STREAMING_QUERY + ", which takes no store flag or previous response"
           for a in ("store=false", "continued") for b in INTERRUPTED},
    },
)  # fmt: skip


def request_kinds(
    send: Send, plan: Any, store: bool, previous: str | None, ending: str | None,
    write_fails: bool,
) -> list[str]:  # fmt: skip
    """The kinds of a request as it was sent (:data:`KINDS`), in their order."""
    named = {
        "interrupt": "interrupted", "hang_up": "hung up",
        "hang_up_interrupt": "hung up, then interrupted", "blocked": "blocked",
    }  # fmt: skip
    has = {
        "at the limit": send.size == "at_limit",
        "compacted": bool(plan.compacted),
        "store=false": not store,
        "continued": previous is not None,
        "write fails": write_fails,
        **{k: named.get(ending or "") == k for k in ENDINGS},
    }
    return [k for k in KINDS if has[k]]


def count_shapes(path: str, kinds: Sequence[str]) -> None:
    for kind in kinds or [PLAIN]:
        shapes.reached(KINDS_BY_PATH, kind, path)
    for i, a in enumerate(kinds):
        for b in kinds[i + 1 :]:
            shapes.reached(KIND_PAIRS, a, b)


# -- the model's items in the view the target is compared in ------------------


def text_of(content: model.JSONObject) -> str:
    if content.get("type") == "summary":
        return str(content["text"])
    value = content.get("content", content.get("refusal", ""))
    return value if isinstance(value, str) else str(value)


def view(kind: str, content: model.JSONObject) -> ItemView:
    role = str(content.get("role", "user"))
    return ItemView(kind, role, text_of(content))


def explicit_view(content: model.JSONObject) -> ItemView:
    if content.get("type") == "summary":
        return ItemView("summary", "user", text_of(content))
    return view("output" if content.get("role") == "assistant" else "input", content)


def summarize(items: Sequence[model.JSONObject]) -> str:
    return harness.summarize([text_of(item) for item in items])


def stored_text(content: model.JSONObject) -> str:
    """An item's text as the tree stores it: an answer cut short carries its notice."""
    cut = content.get("status") == "incomplete" and text_of(content)
    return text_of(content) + (service.get().interrupted_suffix if cut else "")


def lightspeed_estimate(
    instructions: str, turns: Sequence[model.Turn], new: Sequence[model.JSONObject]
) -> int:
    """The tree's token count of what the model says the request sends.

    The instructions, every stored summary, the turns no summary covers (an answer
    cut short as stored: with the tree's notice) and the new input, each counted by
    the tree's own ``estimate_tokens``.
    """
    ls = service.get()
    markers = [turn.marker for turn in turns if turn.marker is not None]
    covered = max((int(m["last_turn"]) for m in markers), default=0)
    recent = [c for turn in turns[covered:] for c in turn.exchange]
    total = ls.count_text(instructions)
    total += sum(ls.count_text(text_of(m)) for m in markers)
    total += ls.count_messages([(str(c.get("role")), stored_text(c)) for c in recent])
    total += ls.count_messages([(str(c.get("role")), text_of(c)) for c in new])
    return total


def lightspeed_count(items: Sequence[model.JSONObject]) -> int:
    """The tree's token count of stored items, as its degrading guard counts a buffer."""
    return service.get().count_messages([(str(c.get("role")), stored_text(c)) for c in items])


def params_for(config: harness.RunConfig) -> model.Params:
    """The model's parameters for the tree's configuration ``config``."""
    return model.Params(
        context_window=config.window,
        threshold_ratio=config.ratio,
        token_floor=config.floor,
        buffer_turns=config.buffer,
        instructions=INSTRUCTIONS,
        summarize=summarize,
        estimate=lightspeed_estimate,
        buffer_max_ratio=config.buffer_ratio,
        count=lightspeed_count,
    )


@dataclass(frozen=True)
class Send:
    """How a request is built.

    ``size``: ``short``; ``at_limit`` / ``over_limit``: padded so the estimate
    is exactly the compaction limit / one token over it (when the
    conversation leaves room). ``form``, ``store``: on ``responses`` paths
    only (``query`` takes a string and always stores). ``ending``, on
    streamed paths only: ``completed``; ``interrupt``: after the first chunk
    the client calls the tree's interrupt endpoint and reads on (on
    ``streaming_query``, where the tree has the endpoint); ``hang_up``: after
    the first chunk the client closes the connection; ``hang_up_interrupt``: it
    closes the connection and calls the interrupt endpoint too (a browser's stop
    button), and the interrupt arrives while the tree stores the turn cut short
    (on ``streaming_query``, where the tree has the endpoint). ``blocked``, on
    ``responses`` paths, where the tree checks input: the input carries
    markup the tree refuses, and its refusal is the answer. ``previous``, on
    ``responses`` paths: the request continues from the conversation's last
    response (``previous_response_id`` instead of ``conversation``), when the
    last request was a stored, completed ``responses`` one. ``write_fails``:
    when the model says the owner writes the turn, the conversation store
    refuses the tree's writes during the request (S7).
    """

    size: str = "short"
    form: str = "text"
    store: bool = True
    chunks: int = 2
    ending: str = "completed"
    previous: bool = False
    write_fails: bool = False


sends = st.builds(
    Send,
    size=st.sampled_from(["short", "at_limit", "over_limit"]),
    form=st.sampled_from(["text", "items"]),
    store=st.sampled_from([True, True, True, False]),
    chunks=st.integers(1, 3),
    ending=st.sampled_from(
        ["completed"] * 3 + ["interrupt", "hang_up", "hang_up_interrupt", "blocked"]
    ),
    previous=st.sampled_from([False, False, True]),
    write_fails=st.sampled_from([False] * 5 + [True]),
)


class LightspeedMachine(RuleBasedStateMachine):
    conversations = Bundle("conversations")
    #: known findings that reproduce on this tree: their regions are left out
    excluded: tuple[Finding, ...] = ()

    def __init__(self) -> None:
        super().__init__()
        self.ls = service.configure(service.CONFIG)
        self.params = params_for(service.CONFIG)
        self.numbers = itertools.count(1)
        self.convs: dict[str, tuple[model.Turn, ...]] = {}
        self.ids: dict[str, str] = {}
        #: each conversation's last response id, when a continuation can name it
        self.last_response: dict[str, str | None] = {}
        #: who wrote each turn of each conversation, per the model
        self.writers: dict[str, tuple[model.Writer | None, ...]] = {}
        self.calls_seen = len(self.ls.llm.calls)
        #: each conversation's A2A context, once a message was sent in one
        self.contexts: dict[str, str] = {}
        #: the conversations an A2A message started (the /v1 paths refuse them)
        self.a2a_only: set[str] = set()

    # -- conversations -------------------------------------------------------------

    @initialize(target=conversations, config=st.sampled_from(service.CONFIGS))
    def first_conversation(self, config: harness.RunConfig | None = None) -> str:
        """The example's compaction configuration (a fixed program keeps the default),
        then its first conversation."""
        if config is not None:
            self.configure(config)
        return self.new_conversation()

    def configure(self, config: harness.RunConfig) -> None:
        """The tree and the model, both under ``config`` from the next request on."""
        self.ls.configure(config)
        self.params = params_for(config)
        note_event(f"configuration {config}")

    @rule(config=st.sampled_from(service.CONFIGS))
    def reconfigure(self, config: harness.RunConfig) -> None:
        """The operator changes the configuration between two requests: the stored
        conversations, and the markers their earlier folds wrote, stay."""
        self.configure(config)

    @rule(target=conversations, first=st.sampled_from(["query"] * 3 + ["a2a"]))
    def new_conversation(self, first: str = "query", send: Send | None = None) -> str:
        """A conversation starts with a short /v1/query or A2A message (the tree creates it);
        a fixed program may start it with another request (``first``, ``send``).

        The tree keeps no owner of a conversation an A2A context started (A2A
        has no user), and its /v1 endpoints refuse such a conversation as not
        found: it goes on over A2A only.
        """
        name = f"c{next(self.numbers)}"
        self.convs[name] = ()
        if first in A2A and self._has(first):
            self.a2a_only.add(name)
        self._request(name, first if self._has(first) else "query", send or Send())
        return name

    def _has(self, path: str) -> bool:
        """The tree serves ``path`` (every tree serves the /v1 paths; A2A is looked up)."""
        return path not in A2A or self.ls.serves("/a2a")

    # -- requests --------------------------------------------------------------------

    @rule(conv=conversations, path=st.sampled_from(PATHS), send=sends)
    def request(self, conv: str, path: str, send: Send) -> None:
        if not self._has(path):
            note_event(f"{path} not served by this tree")
            return
        if conv in self.a2a_only and path not in A2A:  # the /v1 paths refuse it
            note_event(f"{path} on a conversation A2A started: sent over A2A")
            path = "a2a_stream" if path in STREAMED else "a2a"
        self._request(conv, path, send)

    def _input(self, tag: str, send: Send, path: str, pad: int) -> str | tuple[Any, ...]:
        text = tag + " ask" + " x" * pad
        if self._ending(path, send) == "blocked":
            text += BLOCKED_WORD
        if send.form == "text" or not path.startswith("responses"):
            return text
        return (
            {"type": "message", "role": "user", "content": "context follows"},
            {"type": "message", "role": "user", "content": text},
        )

    def _padding(self, conv: str, tag: str, send: Send, path: str) -> int:
        if send.size == "short":
            return 0
        limit = int(self.params.threshold_ratio * self.params.context_window)
        target = max(limit, self.params.token_floor) + (1 if send.size == "over_limit" else 0)

        def estimate(pad: int) -> int:
            new = model.input_items(self._input(tag, send, path, pad))
            return lightspeed_estimate(INSTRUCTIONS, self.convs[conv], new)

        # the fewest pads that reach the target (the estimate grows with the pads):
        # found by bisection, then checked one pad lower
        low, high = 0, 4 * self.params.context_window
        while low < high:
            middle = (low + high) // 2
            if estimate(middle) < target:
                low = middle + 1
            else:
                high = middle
        while low > 0 and estimate(low - 1) >= target:
            low -= 1
        return low

    def _request(self, conv: str, path: str, send: Send) -> None:
        tag = f"q{next(self.numbers)}"
        store = send.store if path.startswith("responses") else True
        value = self._input(tag, send, path, self._padding(conv, tag, send, path))
        previous = self.last_response.get(conv) if send.previous and path in SHIELDED else None
        plan = model.plan(
            self.convs,
            model.Request(conv, value, path, store, previous_response_id=previous),
            self.params,  # type: ignore[arg-type]
        )
        kind = self._ending(path, send)
        stop = kind if kind in ("interrupt", "hang_up", "hang_up_interrupt") else None
        count = max(send.chunks, 2) if stop else send.chunks
        # no leading or trailing blanks: an answer reads the same stripped or not
        chunks = tuple(f"{' ' if i else ''}{tag}{c}" for i, c in enumerate("abc"[:count]))
        ending: model.Ending = model.Completed(chunks)
        if kind == "interrupt":
            ending = model.Interrupted(chunks[:1])
        elif kind in ("hang_up", "hang_up_interrupt"):
            ending = model.Cancelled(chunks[:1])
        elif kind == "blocked":
            ending = model.Blocked(self.ls.refusal)
        owner_writes = model.writer(plan, ending) == "owner"
        write_fails = (
            send.write_fails
            and owner_writes
            and path not in A2A  # S7 does not say what an A2A task does then
            and not _unfolded(plan, ending)
        )
        situation = Situation(
            plan, self.convs[conv], ending, self.writers.get(conv, ()), write_fails, self.params
        )
        left_out = [f.id for f in self.excluded if f.in_region(situation)]
        if left_out:  # a known finding's region: not sent, the model does not move
            note_event(f"left out ({', '.join(left_out)})")
            return
        # a stream stopped after its first chunk: the harness has the fake LLM hold
        # the rest until the app has acted on the stop (harness.Service.stream)
        service.SCRIPTS[tag] = Reply(chunks)
        self.ls.writes_fail = write_fails
        try:
            response = self._send(conv, path, value, store, stop, previous)
        finally:
            self.ls.writes_fail = False
        count_shapes(path, request_kinds(send, plan, store, previous, kind, write_fails))
        note_event(f"{path} compacted={plan.compacted} store={store} {kind or 'completed'}")

        answer = self.ls.refusal if kind == "blocked" else "".join(chunks)
        how = "compacted" if plan.compacted else "not compacted"
        program = f"{path} {tag} ({how}{', ' + kind if kind else ''})"
        if previous:
            program += f" continuing from {previous}"
        if write_fails:
            program += ", its write failing"
        if conv not in self.ids and response.conversation:
            self.ids[conv] = response.conversation
        if path in A2A and response.a2a_context:
            self.contexts[conv] = response.a2a_context
        # a stream whose write failed answered with a response id, but S7 does not say
        # whether a request may continue from it (its turn is in no conversation)
        completed_store = (
            store and not kind and path in SHIELDED and response.status == 200 and not write_fails
        )
        self.last_response[conv] = response.response_id if completed_store else None
        sent_before = self.convs[conv]
        self.convs, outcome = model.settle(self.convs, plan, ending, write_fails=write_fails)
        if outcome.stored is not None:
            self.writers[conv] = (*self.writers.get(conv, ()), outcome.writer)
        # S6 first: what is kept
        problems = [self._conversation_problem(conv, program, sent_before, outcome)]
        if write_fails:  # S7 judges the answer; it does not say whether inference ran
            problems.append(self._failed_write_problem(program, path, response, outcome))
            self.calls_seen = len(self.ls.llm.calls)
        else:
            problems += self._answer_problems(program, path, stop, response, answer)
            problems.append(self._llm_input_problem(tag, plan, sent_before, program, kind))
        found = [p for p in problems if p]
        if found:  # raised as is: one paragraph per property, no assertion rewriting
            raise AssertionError("\n\n".join(found))

    def _answer_problems(
        self, program: str, path: str, stop: str | None, response: Response, answer: str
    ) -> list[str]:
        """S9: HTTP 200 and the LLM's answer, a /v1 stream with its closing event; a
        stream stopped early ends normally."""
        # after a hang-up the interrupt is sent only once the tree stores the turn
        accepted = (200, None) if stop == "hang_up_interrupt" else (200,)
        if stop in ("interrupt", "hang_up_interrupt") and response.interrupt_status not in accepted:
            return [
                f"harness: {program}: the interrupt of the running stream got HTTP "
                f"{response.interrupt_status}, so the stream was not interrupted"
            ]
        if stop and (response.status != 200 or response.error):
            return [
                f"S9: {program}: expected HTTP 200 and a stream that ends normally, got HTTP "
                f"{response.status} error {response.error or response.body!r}"
            ]
        if not stop and (response.status != 200 or response.answer != answer or response.error):
            return [
                f"S9: {program}: expected HTTP 200 with the LLM's answer {answer!r}, got HTTP "
                f"{response.status} answer {response.answer!r} "
                f"error {response.error or response.body!r}"
            ]
        if not stop and path in STREAMED and not response.ended:
            last = response.events[-1].get("event") if response.events else None
            return [
                f"S9: {program}: the stream answered {answer!r} but ended without its "
                f"closing event (its last event: {last!r})"
            ]
        return []

    def _ending(self, path: str, send: Send) -> str | None:
        """How the request ends, when not completed (``Send.ending``, where the tree has it)."""
        if send.ending == "blocked":
            return "blocked" if path in SHIELDED and self.ls.refusal else None
        if path not in STREAMED or send.ending == "completed":
            return None
        if send.ending in ("interrupt", "hang_up_interrupt") and (
            path != "streaming_query" or not self.ls.serves(INTERRUPT)
        ):
            return None
        return send.ending

    def _send(
        self,
        conv: str,
        path: str,
        value: str | tuple[Any, ...],
        store: bool,
        stop: str | None,
        previous: str | None,
    ) -> Response:
        cid = None if previous else self.ids.get(conv)
        if path in A2A:
            assert isinstance(value, str)
            return self.ls.a2a(value, self.contexts.get(conv), cid, stream=path == "a2a_stream")
        if path == "query":
            assert isinstance(value, str)
            return self.ls.query(value, cid)
        if path == "responses":
            return self.ls.responses(
                value if isinstance(value, str) else list(value),
                cid,
                store=store,
                previous_response_id=previous,
            )
        if path == "streaming_query":
            payload: dict[str, Any] = {"query": value, "generate_topic_summary": False}
            if cid:
                payload["conversation_id"] = cid
            stop_after = 1 if stop else None
            return self.ls.stream(
                ENDPOINT[path],
                payload,
                stop_after=stop_after,
                interrupt=stop == "interrupt",
                interrupt_while_storing=stop == "hang_up_interrupt",
            )
        payload = {
            "input": value if isinstance(value, str) else list(value),
            "store": store,
            "stream": True,
            "generate_topic_summary": False,
        }
        if cid:
            payload["conversation"] = cid
        if previous:
            payload["previous_response_id"] = previous
        return self.ls.stream(ENDPOINT[path], payload, stop_after=1 if stop else None)

    # -- comparisons -------------------------------------------------------------------

    def _llm_input_problem(
        self,
        tag: str,
        plan: model.Plan,
        turns: tuple[model.Turn, ...],
        program: str,
        kind: str | None,
    ) -> str | None:
        """C1: what the LLM was sent for this request, message by message."""
        calls = [c for c in self.ls.llm.calls[self.calls_seen :] if service.tag_of(c) == tag]
        self.calls_seen = len(self.ls.llm.calls)
        if kind == "blocked":  # a shield answers; the LLM is not asked
            if not calls:
                return None
            return f"C1: {program}: the LLM was called {len(calls)} times for {tag}, not at all"
        if len(calls) != 1:
            return f"C1: {program}: the LLM was called {len(calls)} times for {tag}, not once"
        notice = self.ls.interrupted_suffix
        got = [message_view(m, self.ls.sentinel, notice) for m in calls[0].messages]
        expected = [ItemView("system", "system", INSTRUCTIONS)]
        if plan.compacted:
            expected += [explicit_view(c) for c in plan.explicit_input or ()]
        else:
            expected += [view(kind, c) for _, kind, c in model.flatten(turns)]
            expected += [view("input", c) for c in plan.original_input]
        decision = "compacted" if plan.compacted else "not compacted"
        if got == expected:
            return None
        return side_by_side(
            f"C1: {program}: the model says {decision} (estimate {plan.estimate}); "
            "the LLM was sent something else",
            "sent to the LLM",
            got,
            expected,
        )

    def _failed_write_problem(
        self, program: str, path: str, response: Response, outcome: model.Outcome
    ) -> str | None:
        """S7: a failed write fails a blocking request; a stream ends normally."""
        failed = response.status != 200 or bool(response.error)
        if outcome.request_fails and not failed:
            return (
                f"S7: {program}: the write failed, so the request must fail; "
                f"it answered HTTP {response.status} {response.answer!r}"
            )
        if not outcome.request_fails and failed:
            return (
                f"S7: {program}: the write failed on a stream, which must end normally; "
                f"got HTTP {response.status} error {response.error or response.body!r}"
            )
        return None

    def _conversation_problem(
        self, conv: str, program: str, before: tuple[model.Turn, ...], outcome: model.Outcome
    ) -> str | None:
        """S6 (and which of S1-S3 it shows): the conversation OGX holds, item by item."""
        cid = self.ids.get(conv)
        got = self.ls.items(cid) if cid else []
        expected = [view(kind, c) for _, kind, c in model.flatten(self.convs[conv])]
        if got == expected:
            return None
        props = f"{shown_by(got, expected, before, outcome)}S6"
        if "failing" in program:  # part of a turn whose write failed
            props = f"S7/{props}"
        return side_by_side(
            f"{props}: after {program}: conversation {conv} differs from the model",
            "OGX holds",
            got,
            expected,
        )


def _unfolded(plan: model.Plan, ending: model.Ending) -> bool:
    """A completed request compacted with no summary at all: nothing was there to fold.

    Its explicit input is the conversation and the new input, exactly what the
    uncompacted request sends, so the tree may as well let the server store
    the turn; which of the two writes it cannot be seen, so no failed write is
    injected there (S7 is checked on every other owner write).
    """
    explicit = plan.explicit_input or ()
    return (
        isinstance(ending, model.Completed)
        and plan.compacted
        and not any(c.get("type") == "summary" for c in explicit)
    )


#: the openings (:meth:`LightspeedLockstep.openings`): each a kind of request whose
#: settlement differs from a plain turn's, on a path, after the short turns it needs
#: (a compaction at or over the limit folds something only after two turns)
OPENINGS: tuple[tuple[str, str, tuple[Send, ...]], ...] = (
    ("compacted", "responses", (Send(), Send(size="over_limit"))),
    ("compacted", "responses_stream", (Send(), Send(size="over_limit"))),
    ("compacted", "query", (Send(), Send(size="over_limit"))),
    ("at the limit", "responses", (Send(), Send(size="at_limit"))),
    ("at the limit", "a2a", (Send(), Send(size="at_limit"))),
    ("blocked", "responses", (Send(ending="blocked"),)),
    ("store=false", "responses", (Send(store=False),)),
    ("continued", "responses", (Send(), Send(previous=True))),
    ("its write failing", "responses", (Send(), Send(size="over_limit", write_fails=True))),
    ("interrupted", "streaming_query", (Send(ending="interrupt"),)),
    ("hung up", "responses_stream", (Send(ending="hang_up"),)),
)


class LightspeedLockstep(LightspeedMachine):
    """The lockstep as the test runs it: the rules above, and :meth:`openings` first.

    Hypothesis's first example draws the simplest choice everywhere. Without
    openings that is a run of short /v1/query turns in one conversation, and the
    requests whose settlement differs (compacted, blocked, ...) come only in later,
    random examples: a break of one of them was found after some ten examples of
    up to 40 steps, and its counterexample was long to shrink. ``openings`` has no
    target and no argument, so Hypothesis orders it before ``request``: the first
    example opens with it, and such a break fails within the first second of the
    search, on a program of two steps that leaves Hypothesis little to shrink.
    """

    def __init__(self) -> None:
        super().__init__()
        self.sent = 0

    def _request(self, conv: str, path: str, send: Send) -> None:
        self.sent += 1
        super()._request(conv, path, send)

    @precondition(lambda self: self.sent == 1)  # the first step after first_conversation
    @rule()
    def openings(self) -> None:
        """Each of OPENINGS in a conversation of its own, started by a short /v1/query.

        On a failure, a note names the openings sent up to it.
        """
        done: list[str] = []
        for kind, path, sends in OPENINGS:
            name = f"c{next(self.numbers)}"
            self.convs[name] = ()
            done.append(f"{name}: {kind} on {path}")
            try:
                self._request(name, "query", Send())
                if not self._has(path):
                    note_event(f"{path} not served by this tree")
                    continue
                for send in sends:
                    self._request(name, path, send)
            except AssertionError as exc:
                exc.add_note(
                    f"state.openings() sent, each in a new conversation: {'; '.join(done)}"
                )
                raise


@pytest.fixture(autouse=True)
def _leave_out_known_findings(reproducing: tuple[Finding, ...]) -> None:
    LightspeedMachine.excluded = reproducing
    service.get()  # started here, not in the first example: the search's time is its own


TestLightspeedLockstep = LightspeedLockstep.TestCase
# Every failure of the lockstep is raised at one place (``_request``), so Hypothesis
# takes them all for one bug: once one is found, searching on for others (at least
# ten examples, up to ten seconds, by default) only delays the report.
# Each step is a request to the real service: the search is sized for that, per
# profile, in ctxaudit/profiles.py (SERVICE_SEARCH).
TestLightspeedLockstep.settings = settings(
    TestLightspeedLockstep.settings, report_multiple_bugs=False, **profiles.service_search()
)
