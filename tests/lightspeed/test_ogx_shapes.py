"""The shapes an OGX (Llama Stack) client's ``conversations.items.list`` returns, and
how the harness reads each (:func:`harness.iter_items`), with fake clients.

What the trees' clients return (read from their sources): llama-stack-client 0.6.0
(the 0.6 line) and ogx-client 1.0.2 (main, the 0.7 line) and 1.1.3 (the newest on
PyPI) return an ``AsyncPaginator``: awaitable (the first page) and async-iterable
(every page, following ``has_more`` with ``after=`` the page's ``last_id``). A client
that awaits the call and hands back a page, and anything the harness does not know,
are here too: the last must be *could not check*, never read as an empty conversation.
No tree's environment is needed.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Generator
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from ctxaudit.outcomes import CouldNotCheck, could_not_check
from ctxaudit.targets.lightspeed import harness


def _item(n: int) -> SimpleNamespace:
    return SimpleNamespace(id=f"msg_{n}", type="message", role="user", content=f"q{n} ask")


ITEMS = [_item(n) for n in range(1, 8)]


@dataclass
class Page:
    """ogx-client's ``AsyncOpenAICursorPage``: its fields, no auto-pagination."""

    data: list[Any]
    has_more: bool | None = None
    last_id: str | None = None


@dataclass
class Pages:
    """A fake server of one conversation: pages of ``size`` items after a cursor."""

    size: int = 3
    cursor: Callable[[list[Any]], str | None] = lambda data: data[-1].id if data else None
    asked: list[str | None] = field(default_factory=list)

    def page(self, after: str | None = None) -> Page:
        self.asked.append(after)
        start = 0 if after is None else [i.id for i in ITEMS].index(after) + 1
        data = ITEMS[start : start + self.size]
        return Page(data, has_more=start + self.size < len(ITEMS), last_id=self.cursor(data))

    async def awaited(self, after: str | None = None) -> Page:
        return self.page(after)


class AsyncPaginator:
    """The trees' clients' ``AsyncPaginator``: awaiting it gives the first page only,
    iterating it gives every item of every page."""

    def __init__(self, pages: Pages) -> None:
        self.pages = pages

    def __await__(self) -> Generator[Any, None, Page]:
        return self.pages.awaited().__await__()

    async def __aiter__(self) -> AsyncIterator[Any]:
        after = None
        while True:
            page = self.pages.page(after)
            for item in page.data:
                yield item
            if not page.has_more:
                return
            after = page.last_id


def read(listing: Any, page_after: Callable[[str], Any] | None = None) -> list[Any]:
    def no_more(cursor: str) -> Any:
        raise AssertionError(f"asked for the page after {cursor!r}")

    return asyncio.run(harness.iter_items(listing, page_after or no_more))


def test_an_async_paginator_is_iterated_through_every_page() -> None:
    pages = Pages()
    assert read(AsyncPaginator(pages)) == ITEMS
    assert pages.asked == [None, "msg_3", "msg_6"]


def test_an_awaited_page_is_followed_by_its_last_id() -> None:
    pages = Pages()
    assert read(pages.awaited(), pages.awaited) == ITEMS
    assert pages.asked == [None, "msg_3", "msg_6"]


def test_a_page_without_last_id_is_followed_by_its_last_item_s_id() -> None:
    pages = Pages(size=2, cursor=lambda _: None)
    assert read(pages.awaited(), pages.awaited) == ITEMS
    assert pages.asked == [None, "msg_2", "msg_4", "msg_6"]


def test_a_plain_page_and_a_sync_iterable_are_read() -> None:
    pages = Pages(size=100)
    assert read(pages.page()) == ITEMS
    assert read(iter(ITEMS)) == ITEMS
    assert read(list(ITEMS)) == ITEMS
    assert read(Page([], has_more=False)) == []


def test_a_coroutine_of_a_page_of_an_unknown_type_is_could_not_check() -> None:
    class UnknownPage:
        items = ITEMS

    async def listing() -> UnknownPage:
        return UnknownPage()

    with pytest.raises(CouldNotCheck, match="UnknownPage") as raised:
        read(listing())
    assert could_not_check(raised.value) is not None


@pytest.mark.parametrize(
    ("listing", "shape"),
    [
        (Page([SimpleNamespace(id="x")], has_more=False), "has no type"),
        ({"data": ITEMS}, "builtins.dict"),
        ("msg_1", "builtins.str"),
        (Page([], has_more=True), "names no cursor"),
    ],
    ids=["item-without-type", "mapping", "string", "more-without-cursor"],
)
def test_other_shapes_are_could_not_check(listing: Any, shape: str) -> None:
    with pytest.raises(CouldNotCheck, match=shape):
        read(listing)


def test_a_cursor_that_does_not_move_is_could_not_check() -> None:
    stuck = Page(ITEMS[:2], has_more=True, last_id="msg_2")
    with pytest.raises(CouldNotCheck, match="asked for twice"):
        read(stuck, lambda _: stuck)


def test_service_items_is_an_observation_any_error_there_is_could_not_check() -> None:
    """``Service._items`` as the bug met it: a client whose ``items.list`` is a
    coroutine (which the harness once ``async for``-ed: a TypeError), and a client
    that raises. Both are ctxaudit's: could not check, naming the observation."""

    class UnknownPage:
        pass

    async def unknown(*_: Any, **__: Any) -> UnknownPage:
        return UnknownPage()

    def broken(*_: Any, **__: Any) -> Any:
        raise RuntimeError("the client lost its connection")

    for listing, said in ((unknown, "UnknownPage"), (broken, "RuntimeError")):
        ogx = SimpleNamespace(conversations=SimpleNamespace(items=SimpleNamespace(list=listing)))
        service = SimpleNamespace(ogx=ogx)
        with pytest.raises(CouldNotCheck, match="conversation items") as raised:
            asyncio.run(harness.Service._items(service, "c1"))  # type: ignore[arg-type]
        assert said in str(raised.value)
        why = could_not_check(raised.value)
        assert why is not None and said in why
