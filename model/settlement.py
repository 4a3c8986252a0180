"""Reference model of turn settlement and conversation growth (docs/properties.md, section 3).

Given a request and how it ended, which items each conversation must hold.
Pure: no I/O, no SQLite, no clock; states are immutable values.

What a reader checks against docs/properties.md, section 3:

Items. A conversation is a tuple of turns; a turn is what one write appends:
an optional summary marker, the input items, the output items. Item shapes
(the part of the spec this model fixes so that conversations compare item by
item):

- a string input is one user message ``{"type": "message", "role": "user",
  "content": text}``; a list input is its items, as sent;
- a completed answer streamed as chunks is one assistant message
  ``{"type": "message", "role": "assistant", "status": "completed",
  "content": "".join(chunks)}``;
- an interrupted or cancelled answer is the same with status ``"incomplete"``
  and the text streamed so far, or no output item at all when nothing was
  streamed;
- a blocked answer is ``{"type": "message", "role": "assistant", "status":
  "completed", "refusal": refusal}``;
- a summary marker is ``{"type": "summary", "first_turn": a, "last_turn": b,
  "text": summarize(items of turns a..b)}``.

Estimate. How tokens are counted is the target's own (docs/properties.md, section 3), so
the estimate is an input, ``Params.estimate(instructions, turns, new)``. The
default, :func:`history_estimate`, is the ledger's: ``tokens(text) =
ceil(len(text) / 4)``; an item counts the tokens of its canonical JSON (sorted
keys, separators ``","`` and ``":"``, non-ASCII kept); a request's estimate is
tokens(instructions) + every item of the conversation (markers included) +
every new input item.

C1. Compacted exactly when estimate > threshold_ratio * context_window and
estimate > token_floor. A conversation that already holds a summary marker is
served compacted (with an explicit input) whatever the estimate: handing the
server the conversation again would replay the turns the marker folded (and the
marker itself), which undoes the compaction. (With the default estimate this changes
nothing: the estimate only grows once a marker is stored.) Whether turns are
folded is the threshold's alone (Compaction, below).

Compaction (decided when the request starts, on the conversation as it is
then). ``covered`` is the largest ``last_turn`` of the stored markers (0 if
none), ``n`` the number of turns. Turns are folded only when the estimate is
over the threshold (C1, ``compacts``; docs/properties.md, section 3: "Over threshold_ratio *
context_window and over token_floor, the request is served in compacted mode:
older turns are folded into a summary marker"): then, if ``n - buffer_turns >
covered``, turns ``covered+1 .. n-buffer_turns`` are folded into a new marker.
A harness that caps the kept turns' size (``buffer_max_ratio``: lightspeed-stack's
documented degrading guard) keeps fewer: the newest ``k`` turns no marker covers,
``k`` the largest up to ``buffer_turns`` whose items count at most ``buffer_max_ratio *
context_window`` tokens (``Params.count``, the target's own count, like the estimate).
A request on a conversation that holds a marker but whose estimate is not over
the threshold folds nothing: it is still served with an explicit input (for the
reason under C1) and its turn is still the owner's to write, but no new marker
is written and every turn no marker covers is sent verbatim. (The ledger's
default estimate counts every stored item, so a conversation that holds a marker
is always over the threshold there; lightspeed-stack's counts the markers and
the turns no marker covers, and falls under it again.) The explicit input is:
the stored markers, the new marker (if any), the input and output items of the
turns no marker covers, the new input. The marker's text comes from the
``summarize`` function the caller supplies to both model and implementation
(the summarizer is an input of the system, like the inference backend), so the
model predicts markers exactly rather than only by structure.

S1 (who writes). Nobody when ``store`` is false. Otherwise the server, when
it was handed the conversation (not compacted, no ``previous_response_id``)
and the turn completed; the owner in every other case.

S2 (what). The original input, then the output of the ending; the owner also
stores the new summary marker, first, unless a marker stored since the plan (by a
request that was in flight with this one and ended first) already folds one of its
turns: then it stores none, so no turn is folded twice, and the turns it would have
folded are folded by a later request. The server, when it writes, was sent
the original input (it was not compacted), so the stored input is the
original input either way.

S3 (once). ``settle`` is called once, with the first ending; later reports
change nothing, so they have no entry here.

Order (S6). ``settle`` appends the turn when the request ends, so turns stand in
the order their requests ended: a request planned while another of its
conversation is in flight (planned, not yet settled) and settled first stands
before it, as the inference server appends a turn when its response completes
(docs/properties.md, S6, "Order of turns").

S7 (failed write). The conversation does not change; the request fails on
the blocking paths (``query``, ``responses``) and not on the streaming ones.

Shields exist on the ``responses`` paths only; interruption and cancellation
exist on the streaming paths only (``settle`` refuses other combinations).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

JSONObject: TypeAlias = Mapping[str, Any]
Kind: TypeAlias = Literal["input", "output", "summary"]
Path: TypeAlias = Literal["query", "streaming_query", "responses", "responses_stream"]
Writer: TypeAlias = Literal["server", "owner"]

BLOCKING_PATHS: frozenset[str] = frozenset({"query", "responses"})
STREAMING_PATHS: frozenset[str] = frozenset({"streaming_query", "responses_stream"})
SHIELDED_PATHS: frozenset[str] = frozenset({"responses", "responses_stream"})


# -- items ---------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    kind: Kind
    content: JSONObject


@dataclass(frozen=True)
class Turn:
    items: tuple[Item, ...]

    @property
    def marker(self) -> JSONObject | None:
        return next((i.content for i in self.items if i.kind == "summary"), None)

    @property
    def exchange(self) -> tuple[JSONObject, ...]:
        return tuple(i.content for i in self.items if i.kind != "summary")


def user_message(text: str) -> JSONObject:
    return {"type": "message", "role": "user", "content": text}


def answer(chunks: Sequence[str], status: str) -> tuple[JSONObject, ...]:
    if status == "incomplete" and not chunks:
        return ()
    message = {"type": "message", "role": "assistant", "status": status}
    return ({**message, "content": "".join(chunks)},)


def refusal(text: str) -> tuple[JSONObject, ...]:
    return ({"type": "message", "role": "assistant", "status": "completed", "refusal": text},)


def marker(first_turn: int, last_turn: int, text: str) -> JSONObject:
    return {"type": "summary", "first_turn": first_turn, "last_turn": last_turn, "text": text}


def input_items(value: str | Sequence[JSONObject]) -> tuple[JSONObject, ...]:
    return (user_message(value),) if isinstance(value, str) else tuple(value)


# -- estimate and C1 -------------------------------------------------------------


def tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def item_tokens(content: JSONObject) -> int:
    return tokens(json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False))


def estimate(instructions: str, history: Sequence[JSONObject], new: Sequence[JSONObject]) -> int:
    return tokens(instructions) + sum(map(item_tokens, history)) + sum(map(item_tokens, new))


def items_tokens(items: Sequence[JSONObject]) -> int:
    return sum(map(item_tokens, items))


def history_estimate(instructions: str, turns: Sequence[Turn], new: Sequence[JSONObject]) -> int:
    """The default estimate: instructions, every stored item, the new input."""
    history = [item.content for turn in turns for item in turn.items]
    return estimate(instructions, history, new)


Estimator: TypeAlias = Callable[[str, Sequence["Turn"], Sequence[JSONObject]], int]


@dataclass(frozen=True)
class Params:
    context_window: int
    threshold_ratio: float
    token_floor: int
    buffer_turns: int
    instructions: str
    summarize: Callable[[Sequence[JSONObject]], str] = field(compare=False)
    estimate: Estimator = field(default=history_estimate, compare=False)
    #: the cap on the kept turns' tokens, a share of ``context_window``; None: no cap
    buffer_max_ratio: float | None = None
    #: how the kept turns' items are counted against that cap
    count: Callable[[Sequence[JSONObject]], int] = field(default=items_tokens, compare=False)


def compacts(params: Params, tokens_estimate: int) -> bool:
    """C1."""
    over_ratio = tokens_estimate > params.threshold_ratio * params.context_window
    return over_ratio and tokens_estimate > params.token_floor


def kept_turns(params: Params, uncovered: Sequence[Turn]) -> int:
    """How many of the newest turns no marker covers a fold keeps verbatim."""
    if params.buffer_max_ratio is None:
        return params.buffer_turns
    keep = min(params.buffer_turns, len(uncovered))
    cap = params.buffer_max_ratio * params.context_window
    while keep > 0 and params.count([c for t in uncovered[-keep:] for c in t.exchange]) > cap:
        keep -= 1
    return keep


# -- requests, endings, plans ----------------------------------------------------


@dataclass(frozen=True)
class Request:
    conversation: str
    input: str | tuple[JSONObject, ...]
    path: Path
    store: bool = True
    previous_response_id: str | None = None


@dataclass(frozen=True)
class Completed:
    chunks: tuple[str, ...]


@dataclass(frozen=True)
class Blocked:
    refusal: str


@dataclass(frozen=True)
class Interrupted:
    """The interrupt callback came first; ``chunks`` is what the client had received."""

    chunks: tuple[str, ...]


@dataclass(frozen=True)
class Cancelled:
    """The cancellation handler came first; ``chunks`` is what the client had received."""

    chunks: tuple[str, ...]


Ending: TypeAlias = Completed | Blocked | Interrupted | Cancelled

Conversations: TypeAlias = Mapping[str, tuple[Turn, ...]]


@dataclass(frozen=True)
class Plan:
    """What is decided before inference."""

    request: Request
    estimate: int
    compacted: bool
    original_input: tuple[JSONObject, ...]
    #: compacted only: what inference is sent instead of the conversation
    explicit_input: tuple[JSONObject, ...] | None
    #: compacted only, when there were turns to fold
    new_marker: JSONObject | None

    @property
    def server_has_conversation(self) -> bool:
        return not self.compacted and self.request.previous_response_id is None


@dataclass(frozen=True)
class Outcome:
    writer: Writer | None
    #: the turn the conversation gained (None: it did not change)
    stored: Turn | None
    request_fails: bool


def plan(conversations: Conversations, request: Request, params: Params) -> Plan:
    turns = conversations[request.conversation]
    new = input_items(request.input)
    total = params.estimate(params.instructions, turns, new)
    markers = [turn.marker for turn in turns if turn.marker is not None]
    if not (compacts(params, total) or markers):
        return Plan(request, total, False, new, None, None)

    covered = max((m["last_turn"] for m in markers), default=0)
    fold_to = len(turns) - kept_turns(params, turns[covered:])
    new_marker = None
    if compacts(params, total) and fold_to > covered:
        folded = [content for turn in turns[covered:fold_to] for content in turn.exchange]
        new_marker = marker(covered + 1, fold_to, params.summarize(folded))
        markers.append(new_marker)
        covered = fold_to
    recent = [content for turn in turns[covered:] for content in turn.exchange]
    return Plan(request, total, True, new, (*markers, *recent, *new), new_marker)


def writer(plan: Plan, ending: Ending) -> Writer | None:
    """S1."""
    if not plan.request.store:
        return None
    if plan.server_has_conversation and isinstance(ending, Completed):
        return "server"
    return "owner"


def output(ending: Ending) -> tuple[JSONObject, ...]:
    if isinstance(ending, Completed):
        return answer(ending.chunks, "completed")
    if isinstance(ending, Blocked):
        return refusal(ending.refusal)
    return answer(ending.chunks, "incomplete")


def settle(
    conversations: Conversations,
    plan: Plan,
    ending: Ending,
    *,
    write_fails: bool = False,
) -> tuple[dict[str, tuple[Turn, ...]], Outcome]:
    """The conversations after ``plan``'s request ended with ``ending`` (its first report)."""
    path = plan.request.path
    if isinstance(ending, Blocked) and path not in SHIELDED_PATHS:
        raise ValueError(f"no shield on {path}")
    if isinstance(ending, Interrupted | Cancelled) and path not in STREAMING_PATHS:
        raise ValueError(f"{path} is not streamed")
    who = writer(plan, ending)
    if write_fails and who is None:
        raise ValueError("no write happens, so none can fail")
    after = dict(conversations)
    if who is None or write_fails:
        return after, Outcome(who, None, write_fails and path in BLOCKING_PATHS)
    items = [Item("input", content) for content in plan.original_input]
    items += [Item("output", content) for content in output(ending)]
    turns = conversations[plan.request.conversation]
    if who == "owner" and plan.new_marker is not None and not folded(turns, plan.new_marker):
        items.insert(0, Item("summary", plan.new_marker))
    turn = Turn(tuple(items))
    after[plan.request.conversation] = (*conversations[plan.request.conversation], turn)
    return after, Outcome(who, turn, False)


def folded(turns: Sequence[Turn], new_marker: JSONObject) -> bool:
    """Whether a marker of ``turns`` already folds one of ``new_marker``'s turns."""
    covered = max((t.marker["last_turn"] for t in turns if t.marker is not None), default=0)
    return bool(covered >= new_marker["first_turn"])


def flatten(turns: Sequence[Turn]) -> list[tuple[int, Kind, JSONObject]]:
    """``(turn number, kind, content)`` for every item, in order (turns count from 1)."""
    return [
        (number, item.kind, item.content)
        for number, turn in enumerate(turns, 1)
        for item in turn.items
    ]
