"""S7 at the storage level: SIGKILL a process while it writes turns to a file database.

The database must open, pass SQLite's integrity check, hold every turn the
writer reported as committed, and hold no partial turn.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

from ledger.store import ConversationStore

pytestmark = pytest.mark.properties("S7")

KILLS = 12
WRITER = Path(__file__).with_name("durability_writer.py")


def check_database(path: Path, committed: set[str]) -> int:
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        conn.close()
    with ConversationStore(path) as store:
        items = store.items("c")
    turns: dict[int, list[dict[str, object]]] = defaultdict(list)
    for position, item in enumerate(items):
        assert item.position == position, "positions are dense"
        turns[item.turn].append(item.content)
    assert sorted(turns) == list(range(1, len(turns) + 1)), "turn numbers are dense"
    tags = set()
    for number, contents in turns.items():
        tag = contents[0]["tag"]
        size = contents[0]["of"]
        assert [c["index"] for c in contents] == list(range(int(str(size)))), (
            f"turn {number} ({tag}) is partial: {len(contents)} of {size} items"
        )
        assert all(c["tag"] == tag for c in contents), f"turn {number} mixes turns"
        tags.add(str(tag))
    missing = committed - tags
    assert not missing, f"committed turns lost: {sorted(missing)[:5]}"
    return len(turns)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_killed_writer_leaves_only_whole_turns(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    with ConversationStore(path) as store:
        store.create_conversation("c")
    rng = random.Random(20240611)  # fixed: the kill points are the same on every run
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    committed: set[str] = set()
    for _ in range(KILLS):
        child = subprocess.Popen(
            [sys.executable, str(WRITER), str(path), "c"],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert child.stdout is not None
        for _ in range(rng.randint(1, 25)):
            line = child.stdout.readline()
            if not line:
                break
            committed.add(line.strip())
        time.sleep(rng.uniform(0, 0.004))
        child.send_signal(signal.SIGKILL)
        rest, _ = child.communicate()
        committed.update(rest.split())  # commits reported before the kill landed
        assert child.returncode == -signal.SIGKILL
        check_database(path, committed)
    turns = check_database(path, committed)
    assert turns >= len(committed) > KILLS


def test_the_check_sees_a_partial_turn(tmp_path: Path) -> None:
    """The checker itself can fail: a turn missing an item is reported."""
    path = tmp_path / "partial.db"
    with ConversationStore(path) as store:
        store.create_conversation("c")
        contents = [{"tag": "t", "index": i, "of": 3} for i in range(3)]
        store.append_turn("c", [("input", c) for c in contents])
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM items WHERE position = 2")
    conn.commit()
    conn.close()
    with pytest.raises(AssertionError, match="partial"):
        check_database(path, {"t"})
