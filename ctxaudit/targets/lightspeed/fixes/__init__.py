"""A fix for each known lightspeed-stack finding: one module per finding, defining
``FIX`` (the format is :mod:`ctxaudit.fixes`); ``trees.py`` names the trees their
forms are written for."""
