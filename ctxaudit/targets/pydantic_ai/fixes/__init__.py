"""A fix for each known pydantic-ai finding: one module per finding, defining ``FIX``
(the format is :mod:`ctxaudit.fixes`)."""
