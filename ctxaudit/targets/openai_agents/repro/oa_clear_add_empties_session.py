"""OA-CLEAR-ADD-EMPTIES-SESSION: a store that refuses to add the compacted output; the
compaction cleared it first, so it is left empty. Exit 1 when the history is gone."""

import asyncio
import sys

from agents.memory import OpenAIResponsesCompactionSession, SessionABC
from fake_responses import Fake, connect, show

fake = Fake()
client = connect(fake)


class Store(SessionABC):
    """A list in memory whose add_items refuses compaction items (a full disk, say)."""

    def __init__(self):
        self.session_id = "s"
        self.session_settings = None
        self.rows = []

    async def get_items(self, limit=None):
        return list(self.rows if limit is None else self.rows[-limit:])

    async def add_items(self, items):
        if any(i.get("type") == "compaction" for i in items):
            raise OSError("store: add refused")
        self.rows.extend(items)

    async def pop_item(self):
        return self.rows.pop() if self.rows else None

    async def clear_session(self):
        self.rows.clear()


async def main():
    store = Store()
    await store.add_items(
        [{"role": "user", "content": "u0"}, {"role": "assistant", "content": "a0"}]
    )
    session = OpenAIResponsesCompactionSession("s", store, client=client)
    try:
        await session.run_compaction({"force": True})
    except OSError as exc:
        print("raised:", exc)
    stored = show(await store.get_items())
    print("stored after:", stored)
    if not stored:
        print("BROKEN: the failed replacement left the session empty")
        return 1
    return 0


sys.exit(asyncio.run(main()))
