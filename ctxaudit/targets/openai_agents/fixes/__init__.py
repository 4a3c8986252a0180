"""A fix for each known openai-agents finding: one module per finding, defining ``FIX``
(the format is :mod:`ctxaudit.fixes`)."""
