"""Fixes of the registered google-adk findings (none yet: ADK-DB-SAME-TIME-REORDERED needs an
insertion order the events table does not keep, so its fix is a schema change, not a
patch of one function)."""
