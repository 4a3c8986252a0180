"""A fix for each known langchain finding: one module per finding, defining ``FIX``
(the format is :mod:`ctxaudit.fixes`)."""
