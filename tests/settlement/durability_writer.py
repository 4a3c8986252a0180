"""Child process of the durability test: appends turns to a file database forever.

Usage: python durability_writer.py DB CONVERSATION

Turn ``k`` of this process has ``2 + k % 6`` items; each item's content says
which turn it belongs to (``tag``), its ``index`` and how many items the turn
has (``of``), plus padding so writes take a while. After each commit the
tag is printed (flushed): the parent kills this process at random moments.
"""

from __future__ import annotations

import os
import sys

from ledger.store import ConversationStore


def main() -> None:
    path, conversation = sys.argv[1], sys.argv[2]
    store = ConversationStore(path)
    pad = "x" * 4096
    k = 0
    while True:
        tag = f"{os.getpid()}-{k}"
        size = 2 + k % 6
        items = [
            ("input" if i == 0 else "output", {"tag": tag, "index": i, "of": size, "pad": pad})
            for i in range(size)
        ]
        store.append_turn(conversation, items)  # type: ignore[arg-type]
        print(tag, flush=True)
        k += 1


if __name__ == "__main__":
    main()
