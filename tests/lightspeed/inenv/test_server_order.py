"""What the real inference server stores when two requests of one conversation overlap.

The settlement invariant asks that turns be stored "in the order the turns happened",
which does not say whether a turn happens when its request is sent or when it ends. The
settlement rule (docs/properties.md, "Order of turns") takes it from the inference
server the settlement targets run on: OGX appends a turn's input and output to
the conversation when its response completes (``_sync_response_to_conversation``,
called "before yielding terminal events"), and a request sent meanwhile is answered
over the conversation as it then is, without the turn still in flight.

This observes it through lightspeed-stack: a stream is held after its first chunk, a
blocking query on the same conversation is answered meanwhile, then the stream ends.
The conversation then holds the query's turn before the stream's: the order the turns
ended, not the order they were sent. The ledger, the model and the invariant T2
(``ctxaudit/invariants/settlement.py``) take the same rule.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ctxaudit.outcomes import CouldNotCheck
from ctxaudit.targets.lightspeed.fake_llm import Reply
from ctxaudit.targets.lightspeed.harness import RunConfig
from tests.lightspeed.inenv import service
from tests.lightspeed.inenv.service import tag_of

pytestmark = pytest.mark.properties("S6")

#: a window no two short turns come near, so neither request is compacted (OGX, not
#: the tree's owner, stores both turns)
ROOMY = RunConfig(window=100_000, ratio=0.5, floor=0, buffer=1)


def test_overlapping_turns_are_stored_in_the_order_they_ended() -> None:
    from ctxaudit.targets.lightspeed.wire import Response, absorb, sse

    ls = service.configure(ROOMY)
    service.SCRIPTS.update(
        o1=Reply(("o1a",)),
        o2=Reply(("o2a", " o2b", " o2c")),  # the stream: held after its first chunk
        o3=Reply(("o3a",)),  # the query answered while the stream is held
    )
    first = ls.query("o1 start", None)
    assert first.status == 200, first.body
    conv = first.conversation
    assert conv

    async def overlap() -> list[str]:
        ended: list[str] = []
        payload: dict[str, Any] = {
            "query": "o2 streamed",
            "conversation_id": conv,
            "generate_topic_summary": False,
        }
        ls.llm.hold(1)
        try:
            async with ls.http.stream("POST", "/v1/streaming_query", json=payload) as reply:
                assert reply.status_code == 200
                events = sse(reply.aiter_lines())
                held = Response(status=200)
                try:
                    async with asyncio.timeout(60):
                        async for event in events:  # up to the first chunk of the answer
                            absorb(held, event)
                            if event.get("_delta") is not None:
                                break
                except TimeoutError:
                    # the harness could not hold the stream in flight: no observation
                    raise CouldNotCheck("no chunk of the held stream in 60 s") from None
                # the stream is in flight (its LLM call held): a query meanwhile
                try:
                    async with asyncio.timeout(60):
                        query = await ls._post_json(
                            "/v1/query",
                            {"query": "o3 blocking", "conversation_id": conv,
                             "generate_topic_summary": False},
                        )  # fmt: skip
                except TimeoutError:
                    calls = [tag_of(c) for c in ls.llm.calls]
                    raise CouldNotCheck(
                        f"the query was not answered in 60 s while the stream was held "
                        f"(the fake LLM was called for {calls})"
                    ) from None
                assert query.status == 200, query.body
                ended.append("o3")
                ls.llm.release()
                rest = Response(status=200)
                async with asyncio.timeout(60):
                    async for event in events:
                        absorb(rest, event)
                assert rest.ended, rest.error
                ended.append("o2")
        finally:
            ls.llm.release()
        return ended

    ended = ls.run(overlap())
    assert ended == ["o3", "o2"]
    # the query was answered over the conversation without the stream's turn
    o3_call = next(c for c in ls.llm.calls if tag_of(c) == "o3")
    assert not any("o2" in text for text in o3_call.texts("user")), o3_call.texts("user")

    users = [view.text.split(" ")[0] for view in ls.items(conv) if view.kind == "input"]
    assert users == ["o1", "o3", "o2"], (
        f"OGX stored the overlapping turns as {users}: not in the order they ended "
        "(o1, o3, o2); docs/properties.md's order rule rests on this"
    )
