"""How the harness reads a stream's events (``wire.absorb``): the lockstep's S9 check
of a stream's closing event relies on it (the module needs the tree's httpx). And which
endpoints it finds the tree serves (``Service.serves``): the lockstep's requests rely on
it."""

from __future__ import annotations

from typing import Any

import pytest

from ctxaudit.outcomes import CouldNotCheck
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


def test_the_app_serves_what_its_openapi_document_lists() -> None:
    """``Service.serves`` (Starlette's matching, which the lockstep asks whether the tree
    serves A2A and the interrupt endpoint) agrees with the app's OpenAPI document: every
    operation it lists is served, a path it does not list is not."""
    from tests.lightspeed.inenv import service

    ls = service.get()
    document = ls.app.openapi().get("paths", {})
    assert document, "the app's OpenAPI document lists no path"
    unserved = [
        f"{method.upper()} {path}"
        for path, operations in document.items()
        for method in operations
        if not ls.serves(path.replace("{", "").replace("}", ""), method.upper())
    ]
    assert not unserved, unserved
    for path in ("/a2a", "/v1/streaming_query/interrupt", "/v1/no-such-path"):
        assert ls.serves(path) is (path in document), path


def test_a_route_that_cannot_be_matched_is_could_not_check() -> None:
    """``serves`` runs inside the lockstep's steps: an error reading the routes is
    ctxaudit's (could not check), never a failure of the tree's."""
    from tests.lightspeed.inenv import service

    class Unreadable:
        def matches(self, scope: object) -> object:
            raise RuntimeError("no such route type")

    ls = service.get()
    ls.app.router.routes.insert(0, Unreadable())
    try:
        with pytest.raises(CouldNotCheck, match="could not read the app's routes"):
            ls.serves("/a2a")
    finally:
        ls.app.router.routes.pop(0)
