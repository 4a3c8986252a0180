# ruff: noqa: E501  (edits quote the target's lines verbatim)
"""GR-B6-DECIMAL-TIME (B6): a time cap with a decimal point ('1.5h') did not match the
time pattern and was silently ignored; the fix accepts a decimal number and computes
the seconds in decimal ('1.5h' is 5400 s), a whole number of seconds staying an int.

It does not clash with GR-B6-LEGACY-MINUTES: once '1.5m' reads as a time, the legacy
string's token parts are told apart by position, which is that finding's fix."""

from ctxaudit.fixes import Edit, Fix, Form

FIX = Fix(
    finding="GR-B6-DECIMAL-TIME",
    why="a time cap may have a decimal point ('1.5h' is 5400 seconds), computed in decimal",
    forms=(
        Form(
            versions="*",
            edits=(
                Edit(
                    "engine/eval_cap.py",
                    '    r"^(\\d+)\\s*(s|sec|',
                    '    r"^(\\d+(?:\\.\\d+)?)\\s*(s|sec|',
                ),
                Edit(
                    "engine/eval_cap.py",
                    "    value = int(m.group(1))\n"
                    "    unit = m.group(2).lower()\n"
                    '    if unit in ("s", "sec", "secs", "second", "seconds"):\n'
                    "        return value\n"
                    '    elif unit in ("m", "min", "mins", "minute", "minutes"):\n'
                    "        return value * 60\n"
                    '    elif unit in ("h", "hr", "hrs", "hour", "hours"):\n'
                    "        return value * 3600\n",
                    '    number = __import__("decimal").Decimal(m.group(1))\n'
                    "    unit = m.group(2).lower()\n"
                    '    scale = 1 if unit in ("s", "sec", "secs", "second", "seconds") else 0\n'
                    '    scale = scale or (60 if unit in ("m", "min", "mins", "minute", "minutes") else 0)\n'
                    '    scale = scale or (3600 if unit in ("h", "hr", "hrs", "hour", "hours") else 0)\n'
                    "    if scale:\n"
                    "        seconds = number * scale\n"
                    "        return int(seconds) if seconds == int(seconds) else float(seconds)\n",
                ),
            ),
        ),
    ),
)
