"""openai-agents #4298 (fixed in 0.20.0): a compaction cut short while it writes the
compacted history (the caller's timeout cancels it) must leave the session's history as
it was (or compacted), never empty: the replacement clears the store, then adds; before
the fix a cancellation during the add skipped the rollback (it caught ``Exception``, and
``CancelledError`` is not one). Exit 1 when the history is gone."""

import asyncio
import sys
from types import SimpleNamespace

from agents.memory import OpenAIResponsesCompactionSession, SessionABC


class Store(SessionABC):
    """A list in memory whose writes of a compacted history are slow (a remote store)."""

    def __init__(self):
        self.session_id = "s"
        self.session_settings = None
        self.rows = []
        self.slow = False

    async def get_items(self, limit=None):
        return list(self.rows if limit is None else self.rows[-limit:])

    async def add_items(self, items):
        if self.slow:  # the compacted history's write; the rollback's is quick
            self.slow = False
            await asyncio.sleep(30)
        self.rows.extend(items)

    async def pop_item(self):
        return self.rows.pop() if self.rows else None

    async def clear_session(self):
        self.rows.clear()


class Responses:
    async def compact(self, **request):
        summary = {"type": "message", "role": "assistant", "content": "compacted"}
        return SimpleNamespace(output=[summary])


async def main():
    store = Store()
    history = [{"role": "user", "content": "u0"}, {"role": "assistant", "content": "a0"}]
    await store.add_items(history)
    client = SimpleNamespace(responses=Responses())
    session = OpenAIResponsesCompactionSession("s", store, client=client)
    store.slow = True
    try:
        await asyncio.wait_for(session.run_compaction({"force": True}), timeout=0.5)
    except TimeoutError:
        print("the compaction was cut short")
    else:
        print("ctxaudit: the compaction was not cut short, the program did not run its case")
        sys.exit(2)
    stored = [i.get("content") for i in store.rows]
    print("stored after:", stored)
    if not stored:
        print("BROKEN: a compaction cut short left the session empty")
        sys.exit(1)


asyncio.run(main())
