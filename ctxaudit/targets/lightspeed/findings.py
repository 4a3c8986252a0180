"""Known findings against lightspeed-stack: where a tree breaks a settlement property.

Each finding names the property, the narrowest region of requests where it
shows (in words and as a predicate over the model's :class:`~model.settlement.Plan`),
the trees it is registered for, and the fixed program that reproduces it
(``tests/lightspeed/inenv/test_findings.py``, by the finding's id).

At the start of a session the in-environment suite runs every finding's
program on the tree. The lockstep leaves out exactly the regions of the
findings that reproduce there (a request in such a region is not sent, and
Hypothesis is told so), and checks everything else. A working tree on a
commit named here leaves out only the findings registered for that commit
instead, with no programs run (``tests/lightspeed/test_lightspeed.py``). A finding registered
for a tree must reproduce on it: its regression test fails when the tree is
fixed, and the entry is then narrowed or removed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from model import settlement as model


@dataclass(frozen=True)
class Situation:
    """What a region reads: one request as the model sees it before it is sent."""

    plan: model.Plan
    #: the conversation's turns before the request
    turns: Sequence[model.Turn]
    ending: model.Ending
    #: who wrote each of those turns, per the model (S1)
    writers: Sequence[model.Writer | None]
    #: the conversation store refuses the tree's writes during the request (S7)
    write_fails: bool = False
    #: the configuration the request is served under, as the model's parameters
    params: model.Params | None = None


#: a region: a predicate over the request's situation
Region = Callable[[Situation], bool]

#: main's head in the repository copy of 2026-08-21
MAIN = "cd1a0484"
#: the 0.6 line: its tags and release/0.6's head
RELEASE_06 = frozenset({"0.6.0", "0.6.1", "0.6.2", "b56fe5cb"})
#: the 0.7 line: its tag and release/0.7's head
RELEASE_07 = frozenset({"0.7.0rc1", "4db5a1ee"})


def names_property(message: str, prop: str) -> bool:
    """True when a failure message names ``prop`` (``S6: ...``, ``S1/S6: ...``)."""
    return re.search(rf"(^|\n)[ \t]*(\w+/)*{prop}[:/]", message) is not None


@dataclass(frozen=True)
class Finding:
    id: str
    prop: str
    summary: str
    region: str
    in_region: Region
    #: the trees it is registered for: tags, or commit prefixes
    registered: frozenset[str]
    #: other properties the same break fails (reported with it; ``prop`` is what its
    #: program is checked on)
    also: tuple[str, ...] = ()

    @property
    def props(self) -> str:
        return "/".join((self.prop, *self.also))

    def registered_for(self, tag: str | None, commit: str | None) -> bool:
        return any(
            name == tag or (commit is not None and commit.startswith(name))
            for name in self.registered
        )


def _compacted_on(*paths: str) -> Region:
    def region(s: Situation) -> bool:
        return s.plan.compacted and s.plan.request.path in paths

    return region


def _on(*paths: str) -> Region:
    def region(s: Situation) -> bool:
        return s.plan.request.path in paths

    return region


def _buffer_before_marker(s: Situation) -> bool:
    """Compacted, and a stored marker has turns it does not cover stored before it."""
    if not s.plan.compacted:
        return False
    for number, turn in enumerate(s.turns, 1):
        marker = turn.marker
        if marker is not None and int(marker["last_turn"]) < number - 1:
            return True
    return False


def _uncovered_turn_not_a_pair(s: Situation) -> bool:
    """Compacted, and a turn no marker covers is not one user and one assistant message."""
    if not s.plan.compacted:
        return False
    covered = max((int(t.marker["last_turn"]) for t in s.turns if t.marker), default=0)
    return any(len(turn.exchange) != 2 for turn in s.turns[covered:])


def _kept_under_other_settings(s: Situation) -> bool:
    """Compacted, and a stored marker's fold kept other turns than a fold of the same
    turns under the request's configuration would."""
    if not s.plan.compacted or s.params is None:
        return False
    covered = 0
    for number, turn in enumerate(s.turns, 1):
        if turn.marker is None:
            continue
        folded = int(turn.marker["last_turn"])  # its fold ran before this turn's items
        if number - 1 - model.kept_turns(s.params, s.turns[covered : number - 1]) != folded:
            return True
        covered = folded
    return False


def _unstored_compacted(s: Situation) -> bool:
    return s.plan.compacted and not s.plan.request.store


def _hung_up(s: Situation) -> bool:
    return isinstance(s.ending, model.Cancelled)


def _interrupted(s: Situation) -> bool:
    return isinstance(s.ending, model.Interrupted)


def _after_owner_turn(s: Situation) -> bool:
    """The tree hands OGX the conversation, which holds a turn the owner wrote (not the
    server): not compacted, or compacted with nothing to fold and no marker stored (the
    tree serves such a request as not compacted)."""
    nothing_folded = s.plan.new_marker is None and all(t.marker is None for t in s.turns)
    return (not s.plan.compacted or nothing_folded) and "owner" in s.writers


def _continued_compacted(s: Situation) -> bool:
    return s.plan.compacted and s.plan.request.previous_response_id is not None


def _failed_write_on_stream(s: Situation) -> bool:
    """A streamed /v1/responses whose write fails, compacted or blocked."""
    return (
        s.write_fails
        and s.plan.request.path == "responses_stream"
        and (s.plan.compacted or isinstance(s.ending, model.Blocked))
    )


def _unstored_sent_with_conversation(s: Situation) -> bool:
    """A store=false /v1/responses request the tree hands the server with its
    conversation (not compacted: a compacted request is sent as explicit input; not
    continued from a previous response: that is sent without the conversation), whose
    client reads it to the end (the server stores a turn only when inference ran to
    its end). Only there does the server store the turn itself; everywhere else what
    is stored is the tree's doing, and is checked."""
    request = s.plan.request
    return (
        not request.store
        and not s.plan.compacted
        and request.previous_response_id is None
        and not isinstance(s.ending, model.Cancelled)
    )


#: the items llama-stack 0.6.0's Conversations API lists when no limit is given
FIRST_PAGE = 20


def _past_first_page(s: Situation) -> bool:
    """The conversation holds more items than the server's first page."""
    return sum(len(turn.items) for turn in s.turns) > FIRST_PAGE


FINDINGS: tuple[Finding, ...] = (
    Finding(
        id="LS-QUERY-COMPACTED-FAILS",
        prop="S9",
        summary=(
            "/v1/query answers HTTP 500 to every request served in compacted mode: the "
            "explicit input (a list of messages) is handed to the agent as a prompt string, "
            "the agent run fails before the LLM is called, and the turn is not stored"
        ),
        region="path query, compacted",
        in_region=_compacted_on("query"),
        registered=frozenset({MAIN}),
        also=("S6",),
    ),
    Finding(
        id="LS-STREAMING-QUERY-COMPACTED-FAILS",
        prop="S9",
        summary=(
            "/v1/streaming_query ends every stream served in compacted mode with an SSE "
            "error event (status 500) instead of the LLM's answer, and the turn is not stored"
        ),
        region="path streaming_query, compacted",
        in_region=_compacted_on("streaming_query"),
        registered=frozenset({MAIN}),
        also=("S6",),
    ),
    Finding(
        id="LS-BUFFER-TURNS-LOST",
        prop="C1",
        summary=(
            "the turns a compaction keeps verbatim (buffer_turns) are stored before the "
            "summary marker it writes; later compacted requests send only the items after "
            "the last marker, so those turns are neither summarized nor sent to the LLM"
        ),
        region=(
            "compacted, on a conversation where a stored marker has uncovered turns "
            "stored before it (every compaction with buffer_turns > 0)"
        ),
        in_region=_buffer_before_marker,
        registered=frozenset({MAIN}),
    ),
    Finding(
        id="LS-BUFFER-SPLITS-TURNS",
        prop="C1",
        summary=(
            "the fold keeps the last 2 * buffer_turns messages rather than the last "
            "buffer_turns turns: a turn whose input has several items is split, its first "
            "items folded into the summary and the rest sent verbatim"
        ),
        region=(
            "compacted, with a turn no marker covers that is not exactly one input and one "
            "output message (a list input of several items)"
        ),
        in_region=_uncovered_turn_not_a_pair,
        registered=frozenset({MAIN}),
    ),
    Finding(
        id="LS-MARKER-COVERAGE-UNRECORDED",
        prop="C1",
        summary=(
            "a summary marker does not record which turns it covers: a later request can "
            "only replay the fold that wrote it under its own configuration, so after the "
            "operator changes buffer_turns, buffer_max_ratio or the context window between "
            "two folds of a conversation, the turns that fold kept are read as summarized "
            "or as kept wrongly"
        ),
        region=(
            "compacted, on a conversation where a stored marker's fold kept other turns than "
            "a fold of the same turns under the request's configuration would"
        ),
        in_region=_kept_under_other_settings,
        registered=frozenset({MAIN}),
    ),
    Finding(
        id="LS-UNSTORED-NOT-COMPACTED",
        prop="C1",
        summary=(
            "/v1/responses with store=false is never compacted (only stored requests are "
            "eligible): the whole conversation is replayed to the LLM however far over the "
            "threshold it is"
        ),
        region="responses paths, store=false, compacted",
        in_region=_unstored_compacted,
        registered=frozenset({MAIN}),
    ),
    Finding(
        id="LS-UNSTORED-STORED",
        prop="S1",
        summary=(
            "a /v1/responses request with store=false (blocking or streaming) is stored in "
            "its conversation all the same; fixed by 0.7.0rc1"
        ),
        region=(
            "responses paths, store=false, sent with the conversation (not compacted, not "
            "continued) and read to the end (not hung up)"
        ),
        in_region=_unstored_sent_with_conversation,
        registered=RELEASE_06,
    ),
    Finding(
        id="LS-HANGUP-TURN-LOST",
        prop="S6",
        summary=(
            "a client that closes the connection in the middle of a stream loses the turn: "
            "/v1/streaming_query's cancellation handler starts to store the partial turn, but "
            "the write runs inside the cancelled request scope and is cancelled in turn; "
            "/v1/responses (streaming) stores nothing either"
        ),
        region="streamed paths, the client hangs up after the first chunk",
        in_region=_hung_up,
        # seen on these; the other trees with compaction are not yet checked
        registered=frozenset({"0.6.0", "0.7.0rc1", MAIN}),
    ),
    Finding(
        id="LS-OWNER-TURN-NOT-REPLAYED",
        prop="C1",
        summary=(
            "a turn lightspeed-stack writes itself (a blocked /v1/responses turn, one that "
            "continued from previous_response_id) is in the conversation but never sent to "
            "the LLM again: the next request that is not compacted hands OGX the "
            "conversation, and OGX replays the chat messages it stored itself, which leave "
            "out items written through its Conversations API"
        ),
        region=(
            "on a conversation holding a turn the owner wrote, a request the tree hands OGX "
            "the conversation: not compacted, or over the threshold with nothing to fold "
            "and no marker stored (the tree then serves it as not compacted)"
        ),
        in_region=_after_owner_turn,
        registered=frozenset({MAIN}),
    ),
    Finding(
        id="LS-CONTINUATION-NOT-COMPACTED",
        prop="C1",
        summary=(
            "/v1/responses never compacts a request that continues from previous_response_id "
            "(only requests naming a conversation are eligible): the whole response chain "
            "goes to the LLM however far over the threshold, and the turn is stored without "
            "the summary marker the model expects"
        ),
        region="responses paths, previous_response_id, compacted",
        in_region=_continued_compacted,
        registered=frozenset({MAIN}),
    ),
    Finding(
        id="LS-FAILED-WRITE-FAILS-STREAM",
        prop="S7",
        summary=(
            "a streamed /v1/responses request whose write fails answers HTTP 500 instead of "
            "a stream that ends normally: a compacted request writes its summary marker "
            "before the stream starts, and a blocked one its refusal turn, and either "
            "failure escapes as an internal error"
        ),
        region="path responses_stream, the write fails, compacted or blocked",
        in_region=_failed_write_on_stream,
        registered=frozenset({MAIN}),
    ),
    Finding(
        id="LS-A2A-COMPACTED-TURN-LOST",
        prop="S6",
        summary=(
            "an A2A message (message/send or message/stream) served in compacted mode is "
            "answered, but its turn is never stored: the executor writes the summary marker "
            "and drops the conversation from the request, then runs the agent on the user's "
            "text alone, so the LLM is sent neither the summaries nor the recent turns, and "
            "nothing writes the turn (0.6 stored it with store_compacted_turn; the move to "
            "the pydantic-ai agent lost the write)"
        ),
        region="paths a2a and a2a_stream, compacted",
        in_region=_compacted_on("a2a", "a2a_stream"),
        registered=frozenset({MAIN, *RELEASE_07}),
        also=("C1",),
    ),
    Finding(
        id="LS-INTERRUPT-TURN-LOST",
        prop="S6",
        summary=(
            "an interrupted /v1/streaming_query turn is lost more often than not: the "
            "interrupt callback and the stream's cancellation handler race for the one "
            "write, and when the handler wins, its write runs in the cancelled request "
            "scope and is cancelled (the cause of LS-HANGUP-TURN-LOST); which one wins "
            "depends on timing, so the region is left out wherever this reproduces"
        ),
        region="path streaming_query, interrupted through the tree's interrupt endpoint",
        in_region=_interrupted,
        registered=frozenset({"0.6.0", "0.7.0rc1", MAIN}),
    ),
    Finding(
        id="LS-ITEMS-FIRST-PAGE",
        prop="C1",
        summary=(
            "on the 0.6 line a conversation's items past the first 20 are never read: the "
            "tree lists them through the Conversations API and follows has_more, which "
            "llama-stack 0.6.0 always sets false after at most `limit` items (20 by "
            "default), ignoring `after`; so a conversation longer than ten turns is "
            "estimated on its first 20 items, and compaction comes late or never (the "
            "fully fixed 0.6.1 sent all 31 items of a 15-turn conversation the model "
            "compacts at an estimate of 104). OGX 1.0.2, which the 0.7 line uses, "
            "paginates"
        ),
        region=f"the conversation holds more than {FIRST_PAGE} items",
        in_region=_past_first_page,
        registered=RELEASE_06,
    ),
    Finding(
        id="LS-A2A-NONE-PARAMS-SWALLOWED",
        prop="S6",
        summary=(
            "every A2A message (message/send or message/stream) is answered HTTP 200 with an "
            "empty answer and a task 'completed' that holds only the user's message: the "
            "executor sends the request's parameters to llama-stack without leaving out "
            "those that are None (every other endpoint does), so max_infer_iters=None is "
            "sent, llama-stack 0.6.0 asserts it is not None, and the error event its stream "
            "ends with is not one the executor knows; the LLM is never called and nothing "
            "is stored. Where prepare_responses_params sets max_infer_iters (the 0.6 tags, "
            "from the configuration's default) the same executor holds"
        ),
        region="paths a2a and a2a_stream",
        in_region=_on("a2a", "a2a_stream"),
        # a commit of main from before prepare_responses_params set max_infer_iters
        # (cfdcdc36 on); the audited trees all set it, or run A2A through the agent
        registered=frozenset({"41d55b98"}),
        also=("S9", "C1"),
    ),
)

BY_ID = {finding.id: finding for finding in FINDINGS}
