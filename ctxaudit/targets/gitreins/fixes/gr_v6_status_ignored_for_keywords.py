"""GR-V6-STATUS-IGNORED-FOR-KEYWORDS (V6): the context keywords were looked for in
the text of every error that reached the provider, whatever its HTTP status (a 429
"... tokens per min (TPM)", a 503 "maximum capacity exceeded" compacted); the fix
reads the text only of an error that carries no HTTP response (no status)."""

from ctxaudit.fixes import Edit, Fix, Form

FIX = Fix(
    finding="GR-V6-STATUS-IGNORED-FOR-KEYWORDS",
    why="an error with an HTTP status is judged by its status alone, never by its text",
    forms=(
        Form(
            versions="*",
            edits=(
                Edit(
                    "engine/evaluator.py",
                    "                        kw in err_msg\n",
                    "                        kw in err_msg"
                    ' and getattr(e, "response", None) is None\n',
                ),
            ),
        ),
    ),
)
