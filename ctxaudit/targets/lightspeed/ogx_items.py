"""Every item of a conversation, from whatever the OGX client's ``items.list``
returned (:func:`iter_items`). Importable, and tested, outside a tree's environment:
it needs nothing but the listing it is given."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ctxaudit.outcomes import CouldNotCheck

#: pages :func:`iter_items` follows at most (100 items a page: far past any conversation
#: a test builds); a listing that goes on is a client the harness does not understand
MAX_PAGES = 1000


async def iter_items(listing: Any, page_after: Callable[[str], Any]) -> list[Any]:
    """Every item of a conversation, from what the OGX client's ``items.list`` returned.

    The shapes a client returns, each seen in a client the trees use or may use:

    - an async iterator: llama-stack-client 0.6 and ogx-client 1.0-1.1 return an
      ``AsyncPaginator``, which pages through ``has_more`` and ``after=`` by itself
      (it is awaitable too; iterating it is what follows the pages);
    - an awaitable (a coroutine) that returns one of these shapes;
    - a page: ``data`` (a list of items), ``has_more`` and, when more follow, the
      cursor of the next page: ``last_id`` (ogx-client's ``OpenAICursorPage``) or else
      the id of the page's last item; ``page_after(cursor)`` asks for that page;
    - a sync iterable of items (a list; a sync client's auto-paginating page).

    Each item must carry a ``type``. Anything else raises :class:`CouldNotCheck`
    naming the shape: the harness cannot say what the conversation holds.
    """
    items: list[Any] = []
    cursors: set[str] = set()
    for _ in range(MAX_PAGES):
        if hasattr(listing, "__aiter__"):
            items += [item async for item in listing]
            return _checked(items)
        if inspect.isawaitable(listing):
            listing = await listing
            continue
        data = getattr(listing, "data", None)
        if isinstance(data, list | tuple):
            items += data
            if not getattr(listing, "has_more", False):
                return _checked(items)
            cursor = getattr(listing, "last_id", None) or (
                getattr(data[-1], "id", None) if data else None
            )
            if not isinstance(cursor, str) or not cursor:
                raise CouldNotCheck(
                    f"conversation items: a page ({_shape(listing)}) says more follow, "
                    "but names no cursor (no last_id, no id on its last item)"
                )
            if cursor in cursors:
                raise CouldNotCheck(
                    f"conversation items: the page after {cursor!r} was asked for twice"
                )
            cursors.add(cursor)
            listing = page_after(cursor)
            continue
        if isinstance(listing, Iterable) and not isinstance(listing, str | bytes | Mapping):
            items += list(listing)
            return _checked(items)
        raise CouldNotCheck(
            f"conversation items listed as {_shape(listing)}: not an async iterator, an "
            "awaitable, a page (data, has_more) or an iterable of items"
        )
    raise CouldNotCheck(f"conversation items: more than {MAX_PAGES} pages")


def _checked(items: list[Any]) -> list[Any]:
    for item in items:
        if not isinstance(getattr(item, "type", None), str):
            raise CouldNotCheck(f"a conversation item of shape {_shape(item)} has no type")
    return items


def _shape(value: Any) -> str:
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}"
