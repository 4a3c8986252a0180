"""GR-V6-CLIENT-ERROR-COMPACTS (V6): every HTTP 4xx but 429 counted as a context
error (a 401, 403 or 404 spent a compaction); the fix compacts on 400 and 413 only,
the statuses with which providers refuse a context that is too long."""

from ctxaudit.fixes import Edit, Fix, Form

FIX = Fix(
    finding="GR-V6-CLIENT-ERROR-COMPACTS",
    why="only HTTP 400 and 413 count as a context error by their status",
    forms=(
        Form(
            versions="*",
            edits=(
                Edit(
                    "engine/evaluator.py",
                    "if 400 <= status < 500 and status != 429:\n",
                    "if status in (400, 413):\n",
                ),
            ),
        ),
    ),
)
