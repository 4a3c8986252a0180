"""A fix for each known google-adk finding that has one: one module per finding, defining
``FIX`` (the format is :mod:`ctxaudit.fixes`). ADK-DB-SAME-TIME-REORDERED has none yet:
the events table keeps no insertion order, so its fix is a schema change, not a patch."""
