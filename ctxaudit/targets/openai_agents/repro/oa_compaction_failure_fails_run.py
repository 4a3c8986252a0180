"""OA-COMPACTION-FAILURE-FAILS-RUN: the automatic compaction after a turn fails (its
compact call answers 500); Runner.run raises although the turn was answered and
stored. Exit 1 when the run raises with its turn stored."""

import asyncio
import sys

from agents import Agent, Runner, SQLiteSession
from agents.memory import OpenAIResponsesCompactionSession
from fake_responses import Fake, connect, show

fake = Fake()
client = connect(fake)
fake.compact_status = 500


async def main():
    store = SQLiteSession("s")
    session = OpenAIResponsesCompactionSession(
        "s", store, client=client, should_trigger_compaction=lambda ctx: True
    )
    try:
        result = await Runner.run(Agent("a", model="gpt-4.1"), "q", session=session)
    except Exception as exc:
        stored = show(await store.get_items())
        print("raised:", type(exc).__name__, "| stored:", stored)
        if stored == ["u:q", "a:ok1"]:
            print("BROKEN: the turn was answered and stored, and the run raised")
            return 1
        return 0
    print("returned:", result.final_output, "| stored:", show(await store.get_items()))
    return 0


sys.exit(asyncio.run(main()))
