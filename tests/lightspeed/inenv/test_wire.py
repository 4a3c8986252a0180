"""How the harness reads a stream's events (``wire.absorb``): the lockstep's S9 check
of a stream's closing event relies on it (the module needs the tree's httpx)."""

from __future__ import annotations

from typing import Any

import pytest

from ctxaudit.targets.lightspeed.wire import Response, absorb


@pytest.mark.parametrize(
    ("event", "ended"),
    [
        ({"event": "end", "data": {"input_tokens": 1}}, True),
        ({"event": "message", "type": "response.completed", "response": {"id": "r"}}, True),
        ({"event": "token", "data": {"token": "a"}}, False),
        ({"event": "message", "type": "response.output_text.delta", "delta": "a"}, False),
        ({"event": "error", "data": {"cause": "x"}}, False),
        ({"event": "interrupted", "data": {}}, False),
    ],
)
def test_a_stream_has_ended_only_on_its_closing_event(event: dict[str, Any], ended: bool) -> None:
    response = Response(status=200)
    absorb(response, event)
    assert response.ended is ended
