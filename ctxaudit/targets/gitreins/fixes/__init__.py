"""A fix for each known gitreins finding: one module per finding, defining ``FIX``
(the format is :mod:`ctxaudit.fixes`)."""
