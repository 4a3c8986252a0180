"""OA-MANUAL-COMPACTION-LOSES-WRITES: another writer appends to the store while a manual
run_compaction's compact call is in flight; the whole-history replacement that follows
deletes it. Exit 1 when the appended item is gone."""

import asyncio
import sys
import threading

from agents import SQLiteSession
from agents.memory import OpenAIResponsesCompactionSession
from fake_responses import Fake, connect, show

fake = Fake()
client = connect(fake)


async def main():
    store = SQLiteSession("s")
    await store.add_items(
        [{"role": "user", "content": "u0"}, {"role": "assistant", "content": "a0"}]
    )
    session = OpenAIResponsesCompactionSession("s", store, client=client)
    fake.hold = threading.Event()
    compaction = asyncio.ensure_future(session.run_compaction({"force": True}))
    await asyncio.to_thread(fake.compact_seen.wait)  # the compact call is held
    await store.add_items([{"role": "user", "content": "late"}])  # another writer
    fake.hold.set()
    await compaction
    stored = show(await store.get_items())
    print("stored after:", stored)
    if "u:late" not in stored:
        print("BROKEN: the item appended during the manual compact call was deleted")
        return 1
    return 0


sys.exit(asyncio.run(main()))
