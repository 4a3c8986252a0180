"""The three outcomes of a check on a real tree, with the harness's own observation of
the conversation (``harness.Service._items``) served a shape of listing at a time.

Runs only where ``CTXAUDIT_LIGHTSPEED_HARNESS_CHECKS`` is set (the fault tests,
``tests/faults/test_harness_error.py``): it checks ctxaudit, not the tree, so the
audit's runs of this folder skip it.

Loaded as a plugin (``-p tests.lightspeed.inenv.test_harness_errors``), it makes every
service the session starts list conversation items, to the harness, as a coroutine of
a page of a type the harness does not know: each check then ends as *could not check*.

Only the harness's own calls are served the shape: the tree lists conversation items
through the same client (to estimate what it sends), and those calls go through as
they are, so what the tree does is untouched.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from ctxaudit.outcomes import CouldNotCheck, could_not_check
from ctxaudit.targets.lightspeed import harness
from ctxaudit.targets.lightspeed.findings import names_property
from tests.lightspeed.inenv import service
from tests.lightspeed.inenv.test_lockstep import LightspeedMachine, Send

pytestmark = pytest.mark.skipif(
    not os.environ.get("CTXAUDIT_LIGHTSPEED_HARNESS_CHECKS"),
    reason="checks ctxaudit's harness: set CTXAUDIT_LIGHTSPEED_HARNESS_CHECKS=1",
)

#: a listing the harness is served: (the client's own ``items.list``, its arguments)
Serve = Callable[..., Any]


@dataclass
class Page:
    """A page as a client that awaits the call returns it: no ``last_id``, so the
    harness asks the next page ``after=`` the last item's id."""

    data: list[Any]
    has_more: bool


class UnknownPage:
    """A page of a type the harness does not know (no ``data``, not iterable)."""

    def __init__(self, items: list[Any]) -> None:
        self.items = items


async def _all(own: Callable[..., Any], conv: str, kwargs: dict[str, Any]) -> list[Any]:
    return [item async for item in own(conv, **kwargs)]


def one_item_pages(own: Callable[..., Any], conv: str, **kwargs: Any) -> Any:
    """A coroutine of a page of one item, ``has_more`` while more follow."""
    after = kwargs.pop("after", None)

    async def page() -> Page:
        items = await _all(own, conv, kwargs)
        start = [item.id for item in items].index(after) + 1 if after else 0
        return Page(items[start : start + 1], has_more=start + 1 < len(items))

    return page()


def one_short(own: Callable[..., Any], conv: str, **kwargs: Any) -> Any:
    """A coroutine of one page holding all but the newest item: the conversation as a
    tree that lost the last write would hold it."""

    async def page() -> Page:
        return Page((await _all(own, conv, kwargs))[:-1], has_more=False)

    return page()


def unknown_page(own: Callable[..., Any], conv: str, **kwargs: Any) -> Any:
    async def page() -> UnknownPage:
        return UnknownPage(await _all(own, conv, kwargs))

    return page()


def serve(ls: harness.Service, listing: Serve) -> Callable[[], None]:
    """Serve ``listing`` to the harness's own ``items.list`` calls; returns the undo."""
    items = ls.ogx.conversations.items
    own = items.list

    def listed(*args: Any, **kwargs: Any) -> Any:
        if sys._getframe(1).f_code.co_filename == harness.__file__:
            return listing(own, *args, **kwargs)
        return own(*args, **kwargs)  # the tree's own call, as it made it

    items.list = listed

    def undo() -> None:
        items.list = own

    return undo


@contextlib.contextmanager
def served(ls: harness.Service, listing: Serve) -> Iterator[None]:
    undo = serve(ls, listing)
    try:
        yield
    finally:
        undo()


def _raised(step: Callable[[], object]) -> BaseException:
    try:
        step()
    except Exception as exc:  # noqa: BLE001 - the exception is the datum
        return exc
    raise AssertionError("the step raised nothing")


def test_the_three_outcomes_on_a_real_tree() -> None:
    """Holds (the client's own listing; awaited pages of one item, followed by cursor),
    fails (a page one item short: S6, a finding) and could not check (a page of an
    unknown type), each on the tree's real app and OGX."""
    ls = service.get()
    state = LightspeedMachine()
    state.excluded = ()
    try:
        conv = state.first_conversation()
        with served(ls, one_item_pages):
            state.request(conv=conv, path="query", send=Send())
        assert len(ls.items(state.ids[conv])) == 4  # two turns, each its input and answer

        with served(ls, one_short):
            failed = _raised(lambda: state.request(conv=conv, path="query", send=Send()))
        assert isinstance(failed, AssertionError), repr(failed)
        assert names_property(str(failed), "S6"), str(failed)
        assert could_not_check(failed) is None

        with served(ls, unknown_page):
            unchecked = _raised(state.new_conversation)
        assert isinstance(unchecked, CouldNotCheck), repr(unchecked)
        why = could_not_check(unchecked)
        assert why is not None and "conversation items" in why and "UnknownPage" in why, why
    finally:
        state.teardown()


def pytest_configure(config: pytest.Config) -> None:
    """As a plugin: every service started serves the harness an unknown page."""
    start = harness.Service.start

    def start_then_serve(self: harness.Service) -> harness.Service:
        started = start(self)
        serve(started, unknown_page)
        return started

    harness.Service.start = start_then_serve  # type: ignore[method-assign]
