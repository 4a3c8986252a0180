"""OA-WINDOW-HIDES-HISTORY: a store whose retrieval window (SessionSettings.limit=4)
shows 4 of its 8 items; a manual run_compaction sends the compact call those 4 and
replaces all 8. Exit 1 when items are deleted without being compacted."""

import asyncio
import sys

import agents.memory
from agents import SQLiteSession
from fake_responses import Fake, connect, show

if not hasattr(agents.memory, "SessionSettings"):
    print("this release has no SessionSettings (no retrieval window): not applicable")
    sys.exit(0)

from agents.memory import OpenAIResponsesCompactionSession, SessionSettings

fake = Fake()
client = connect(fake)
HISTORY = [{"role": r, "content": f"{r[0]}{i}"} for i in range(4) for r in ("user", "assistant")]


async def main():
    store = SQLiteSession("s", session_settings=SessionSettings(limit=4))
    await store.add_items(HISTORY)
    session = OpenAIResponsesCompactionSession("s", store, client=client)
    await session.run_compaction({"force": True, "compaction_mode": "input"})
    sent = show(fake.compacts[-1]["input"])
    stored = show(await store.get_items(limit=100))
    print("compact call sent:", sent)
    print("stored after:     ", stored)
    lost = [u for u in ("u:u0", "u:u1") if u not in stored]
    if lost:
        print("BROKEN:", lost, "and their answers deleted, never sent to the compact call")
        return 1
    return 0


sys.exit(asyncio.run(main()))
