"""A fix for each known strands-agents finding that has one: one module per finding,
defining ``FIX`` (the format is :mod:`ctxaudit.fixes`)."""
