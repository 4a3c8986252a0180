"""LS-OWNER-TURN-NOT-REPLAYED (C1): a turn lightspeed-stack writes itself (through OGX's
Conversations API) is never sent to the LLM again by a request that hands OGX the
conversation: OGX rebuilds the context from the chat messages it stored itself. No fix
of the tree's source is verified: the replay is OGX's; the tree could only stop handing
OGX the conversation after an owner-written turn (serve such conversations in the
compacted mode's explicit input), a change of its design, not a minimal edit."""

from ctxaudit.fixes import Fix, Form

FIX = Fix(
    finding="LS-OWNER-TURN-NOT-REPLAYED",
    why="none: what the LLM is sent is OGX's replay of the conversation",
    forms=(
        Form(
            versions="*",
            reason=(
                "OGX replays only the chat messages it stored itself, not items written "
                "through its Conversations API; the tree hands OGX the conversation and has "
                "no minimal edit that changes what OGX replays"
            ),
        ),
    ),
)
