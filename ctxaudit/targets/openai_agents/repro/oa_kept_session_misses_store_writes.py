"""OA-KEPT-SESSION-MISSES-STORE-WRITES: one compaction session kept for the conversation
reads the history once and then tracks only the writes made through it; an item written
to the store directly (another writer, or the application itself) is missing from that
cache, and the next manual run_compaction compacts the cached history and replaces the
whole store with it. Exit 1 when the item written to the store is gone."""

import asyncio
import sys

from agents import SQLiteSession
from agents.memory import OpenAIResponsesCompactionSession
from fake_responses import Fake, connect, show

fake = Fake()
client = connect(fake)


async def main():
    store = SQLiteSession("s")
    session = OpenAIResponsesCompactionSession("s", store, client=client)
    await session.add_items([{"role": "user", "content": "u0"}])
    await session.run_compaction()  # 0 candidates: declined, but the history is now cached
    await store.add_items([{"role": "user", "content": "direct"}])  # not through the session
    await session.run_compaction({"force": True})
    print("compact call sent:", show(fake.compacts[-1]["input"]))
    stored = show(await store.get_items())
    print("stored after:", stored)
    if "u:direct" not in stored:
        print("BROKEN: the item written to the store was deleted without being compacted")
        return 1
    return 0


sys.exit(asyncio.run(main()))
