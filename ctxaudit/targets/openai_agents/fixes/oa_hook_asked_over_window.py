"""OA-HOOK-ASKED-OVER-WINDOW (S6/C1): no fix is verified. Asking the automatic hook over
the model-visible suffix rather than the window's candidates fails 11 of the SDK's own
tests, which pin the hook being asked over the cached, window-bounded view and then over
the reloaded snapshot, and the limit each read passes: the bounded automatic view is the
class's documented design ("atomically replace a bounded, model-visible suffix"), and
whether its hook should count beyond the window is a question for upstream, not a fix."""

from ctxaudit.fixes import Fix, Form

FIX = Fix(
    finding="OA-HOOK-ASKED-OVER-WINDOW",
    why="",
    forms=(
        Form(
            versions=">=0.23.0",
            reason="the SDK's own tests pin the automatic hook asked over the window-bounded "
            "view (a narrower fix fails 11 of them), so the behaviour may be its design: "
            "the upstream report asks",
        ),
    ),
)
