"""LS-UNSTORED-STORED (S1): on the 0.6 line a store=false /v1/responses request is
stored in its conversation. The tree passes store=false through (its responses.py is
the same in 0.7.0rc1, where the finding is gone): it is llama-stack 0.6.0, the server
0.6 pins, that stores the turn; 0.7 fixed it by moving to OGX 1.0.2. No fix of the
tree's source is verified: the change is the inference server, a dependency."""

from ctxaudit.fixes import Fix, Form

FIX = Fix(
    finding="LS-UNSTORED-STORED",
    why="none on the 0.6 line: the server it pins (llama-stack 0.6.0) stores the turn",
    forms=(
        Form(
            versions="*",
            reason=(
                "llama-stack 0.6.0 (pinned by the tree) stores a store=false response in "
                "its conversation; the tree's responses.py is unchanged in 0.7.0rc1, where "
                "OGX 1.0.2 does not: the fix is the server, a dependency, not the tree's source"
            ),
        ),
    ),
)
