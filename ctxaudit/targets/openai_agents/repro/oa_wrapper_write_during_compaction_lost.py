"""OA-WRAPPER-WRITE-DURING-COMPACTION-LOST: a write through the compaction session itself
while its compact call is in flight (openai-agents-python #4679's shape): an item added
is deleted by the replacement that follows, and a clear is undone (the cleared history
comes back compacted). Exit 1 when either happens."""

import asyncio
import sys
import threading

from agents import SQLiteSession
from agents.memory import OpenAIResponsesCompactionSession
from fake_responses import Fake, connect, show

fake = Fake()
client = connect(fake)
HISTORY = [{"role": "user", "content": "u0"}, {"role": "assistant", "content": "a0"}]


async def in_flight(name, write):
    """A forced run_compaction, and ``write`` on the same session while it is in flight."""
    store = SQLiteSession(name)
    await store.add_items(HISTORY)
    session = OpenAIResponsesCompactionSession(name, store, client=client)
    fake.hold, fake.compact_seen = threading.Event(), threading.Event()
    compaction = asyncio.ensure_future(session.run_compaction({"force": True}))
    await asyncio.to_thread(fake.compact_seen.wait)  # the compact call is held
    writing = asyncio.ensure_future(write(session))
    for _ in range(20):  # let the write reach the store, or wait for the session's lock
        await asyncio.sleep(0)
    fake.hold.set()
    await compaction
    await writing
    return show(await store.get_items())


async def main():
    added = await in_flight("add", lambda s: s.add_items([{"role": "user", "content": "late"}]))
    print("added in flight, stored after:  ", added)
    cleared = await in_flight("clear", lambda s: s.clear_session())
    print("cleared in flight, stored after:", cleared)
    broken = False
    if "u:late" not in added:
        print("BROKEN: the item added through the session during the compact call was deleted")
        broken = True
    if cleared:
        print("BROKEN: the clear made through the session during the compact call was undone")
        broken = True
    return 1 if broken else 0


sys.exit(asyncio.run(main()))
