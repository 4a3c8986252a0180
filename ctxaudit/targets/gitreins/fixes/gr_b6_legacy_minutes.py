"""GR-B6-LEGACY-MINUTES (B6): the legacy cap string told token parts from the time part
by trying to read each as a time, so a token part with a lowercase m ('1m' = 1M tokens)
became minutes and the other token part moved to the output cap. The fix reads the
parts by position, as the documented forms say: in ``iterations/time/input/output`` the
last two are tokens; a two-part string is ``input/output`` unless its first part is a
plain iteration count (``100/30m``)."""

from ctxaudit.fixes import Edit, Fix, Form

FIX = Fix(
    finding="GR-B6-LEGACY-MINUTES",
    why="the legacy cap string's token parts are read by position, never as a time",
    forms=(
        Form(
            versions="*",
            edits=(
                Edit(
                    "engine/eval_cap.py",
                    "    if _parse_time(left) is not None or _parse_time(right) is not None:\n",
                    "    if m.group(1).isdigit() and not m.group(2):  # iterations/time\n",
                ),
                Edit(
                    "engine/eval_cap.py",
                    "            t = _parse_time(part)\n",
                    "            t = _parse_time(part) if len(parts) != 4 or i < 2 else None\n",
                ),
            ),
        ),
    ),
)
