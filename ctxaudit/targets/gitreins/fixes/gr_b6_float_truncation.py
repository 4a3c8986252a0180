"""GR-B6-FLOAT-TRUNCATION (B6): token caps are computed in binary floating point and
truncated ('4.1M' -> 4099999); the fix computes them in decimal."""

from ctxaudit.fixes import Edit, Fix, Form

_D = '__import__("decimal").Decimal'

FIX = Fix(
    finding="GR-B6-FLOAT-TRUNCATION",
    why="token caps are multiplied in decimal, so '4.1M' is exactly 4100000",
    forms=(
        Form(
            versions="*",
            edits=(
                Edit(
                    "engine/eval_cap.py",
                    "    value = float(m.group(1))\n",
                    f"    value = {_D}(m.group(1))\n",
                ),
                Edit(
                    "engine/eval_cap.py",
                    "    input_val = float(m.group(1))\n",
                    f"    input_val = {_D}(m.group(1))\n",
                ),
                Edit(
                    "engine/eval_cap.py",
                    "    output_val = float(m.group(3))\n",
                    f"    output_val = {_D}(m.group(3))\n",
                ),
            ),
        ),
    ),
)
