# ruff: noqa: E501  (edits quote the target's lines verbatim)
"""GR-V8-THRESHOLD-UNVALIDATED (V8): compaction_threshold was used as read from
config.yaml. The fix checks it once, before the loop starts (so before the first LLM
call): anything but a number or a string that reads as one is a ValueError naming the
key; a number outside (0, 1), or NaN, is replaced by 0.90 with a warning naming it."""

from ctxaudit.fixes import Edit, Fix, Form

FIX = Fix(
    finding="GR-V8-THRESHOLD-UNVALIDATED",
    why="compaction_threshold is checked before the loop: not a number is an error naming the key, out of (0, 1) is 0.90 with a warning",
    forms=(
        Form(
            versions="*",
            edits=(
                Edit(
                    "engine/evaluator.py",
                    "        self.eval_cap.start()\n",
                    '        valve_ratio = evaluator_cfg.get("compaction_threshold", 0.90)\n'
                    "        if isinstance(valve_ratio, bool) or not isinstance(valve_ratio, (int, float, str)):\n"
                    '            raise ValueError(f"compaction_threshold: expected a number, got {valve_ratio!r}")\n'
                    "        try:\n"
                    "            valve_ratio = float(valve_ratio)\n"
                    "        except ValueError:\n"
                    '            raise ValueError(f"compaction_threshold: expected a number, got {valve_ratio!r}") from None\n'
                    "        if not 0 < valve_ratio < 1:  # NaN too\n"
                    '            logger.warning("compaction_threshold %r is not in (0, 1): using 0.90", valve_ratio)\n'
                    "            valve_ratio = 0.90\n"
                    "        self.eval_cap.start()\n",
                ),
                Edit(
                    "engine/evaluator.py",
                    '                threshold_ratio = evaluator_cfg.get("compaction_threshold", 0.90)\n',
                    "                threshold_ratio = valve_ratio\n",
                ),
            ),
        ),
    ),
)
