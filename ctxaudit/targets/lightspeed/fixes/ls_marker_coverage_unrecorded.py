"""LS-MARKER-COVERAGE-UNRECORDED (C1): a summary marker is a user message holding the
sentinel and the summary; nothing records which turns its fold kept verbatim before it.
Without a conversation cache, a later request can only replay that fold under its own
configuration (LS-BUFFER-TURNS-LOST's fix does), which misreads a marker written under
other buffer settings. No fix of the tree's source is verified: recording the coverage
changes what a marker stores (its text is what clients list and what the summary is read
from), a change of the stored format for the maintainers to choose, not a minimal edit."""

from ctxaudit.fixes import Fix, Form

FIX = Fix(
    finding="LS-MARKER-COVERAGE-UNRECORDED",
    why="none: the stored marker has no record of what it covers",
    forms=(
        Form(
            versions="*",
            reason=(
                "a marker stores only the sentinel and the summary; recording which turns it "
                "covers changes the stored marker format, not a minimal edit"
            ),
        ),
    ),
)
