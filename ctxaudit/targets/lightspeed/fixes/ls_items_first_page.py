"""LS-ITEMS-FIRST-PAGE (C1): on the 0.6 line the tree reads a conversation's items
through the Conversations API and pages on ``has_more``; llama-stack 0.6.0, the server
0.6 pins, returns at most ``limit`` items (20 when none is given), ignores ``after`` and
always says ``has_more: false``. Past 20 items compaction estimates and folds the first
page only. The tree cannot page through a longer conversation on that server; asking
for more than the 100 items the API documents would rely on the server not checking
it. The 0.7 line moved to OGX 1.0.2, which pages: the fix is the server, a dependency.
Found on the fully fixed 0.6.1 (the whole input space checked on the fixed tree), where
LS-QUERY-COMPACTED-FAILS' region no longer hid it."""

from ctxaudit.fixes import Fix, Form

FIX = Fix(
    finding="LS-ITEMS-FIRST-PAGE",
    why="none on the 0.6 line: the server it pins (llama-stack 0.6.0) does not page",
    forms=(
        Form(
            versions="*",
            reason=(
                "llama-stack 0.6.0 (pinned by the tree) lists at most `limit` items (20 by "
                "default, 100 documented), ignores `after` and always answers has_more "
                "false, so no change to the tree's source can page through a longer "
                "conversation; OGX 1.0.2 (the 0.7 line) pages: the fix is the server, a "
                "dependency"
            ),
        ),
    ),
)
