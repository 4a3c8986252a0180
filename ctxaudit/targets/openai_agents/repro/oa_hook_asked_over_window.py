"""OA-HOOK-ASKED-OVER-WINDOW: a store whose retrieval window (SessionSettings.limit=2)
shows the last 2 of its 4 items; a run's model is sent that window and the question
and answers, so the model-visible exchange holds two assistant messages (two
candidates). The decision hook, compact at 2 candidates, is first asked over the
window after the turn (the question and its answer: one candidate) and declines.
Exit 1 when the run's exchange holds 2 candidates and no compact call is made (0.23.1
on, which compact "a bounded, model-visible suffix")."""

import asyncio
import sys

import agents.memory
from agents import Agent, Runner, SQLiteSession
from fake_responses import Fake, connect, show

if not hasattr(agents.memory, "SessionSettings"):
    print("this release has no SessionSettings (no retrieval window): not applicable")
    sys.exit(0)

from agents.memory import OpenAIResponsesCompactionSession, SessionSettings

if "model-visible suffix" not in " ".join((OpenAIResponsesCompactionSession.__doc__ or "").split()):
    # before 0.23.1 automatic compaction replaces the whole history: OA-WINDOW-HIDES-HISTORY
    print("this release compacts the whole history, not a model-visible suffix: not applicable")
    sys.exit(0)

fake = Fake()
client = connect(fake)
HISTORY = [{"role": r, "content": f"{r[0]}{i}"} for i in range(2) for r in ("user", "assistant")]


def two_candidates(ctx):
    return len(ctx["compaction_candidate_items"]) >= 2


async def main():
    store = SQLiteSession("s", session_settings=SessionSettings(limit=2))
    await store.add_items(HISTORY)
    session = OpenAIResponsesCompactionSession(
        "s", store, client=client, should_trigger_compaction=two_candidates
    )
    await Runner.run(Agent("a", model="gpt-4.1"), "q", session=session)
    stored = show(await store.get_items(limit=100))
    print("stored after:", stored, "| compact calls:", len(fake.compacts))
    if not fake.compacts and stored == ["u:u0", "a:a0", "u:u1", "a:a1", "u:q", "a:ok1"]:
        print("BROKEN: the model-visible exchange [u:u1, a:a1, u:q, a:ok1] holds 2 candidates,")
        print("        the hook was asked over the window [u:q, a:ok1] (1) and declined")
        return 1
    return 0


sys.exit(asyncio.run(main()))
