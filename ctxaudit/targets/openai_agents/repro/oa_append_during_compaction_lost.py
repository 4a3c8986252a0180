"""OA-APPEND-DURING-COMPACTION-LOST: another writer appends to the store while the
automatic compaction's compact call is in flight; the replacement that follows deletes
it. Exit 1 when the appended item is gone."""

import asyncio
import sys
import threading

from agents import Agent, Runner, SQLiteSession
from agents.memory import OpenAIResponsesCompactionSession
from fake_responses import Fake, connect, show

fake = Fake()
client = connect(fake)


async def main():
    store = SQLiteSession("s")
    session = OpenAIResponsesCompactionSession(
        "s", store, client=client, should_trigger_compaction=lambda ctx: True
    )
    fake.hold = threading.Event()
    run = asyncio.ensure_future(Runner.run(Agent("a", model="gpt-4.1"), "q", session=session))
    await asyncio.to_thread(fake.compact_seen.wait)  # the compact call is held
    await store.add_items([{"role": "user", "content": "late"}])  # another writer
    fake.hold.set()
    await run
    stored = show(await store.get_items())
    print("stored after:", stored)
    if "u:late" not in stored:
        print("BROKEN: the item appended during the compact call was deleted")
        return 1
    return 0


sys.exit(asyncio.run(main()))
