# ruff: noqa: E501  (edits quote the target's lines verbatim)
"""GR-V2-UNLIMITED-COMPACTS (V2): with an unlimited input budget the threshold is
int(-1 * ratio) == 0; the fix gives an unlimited budget no threshold."""

from ctxaudit.fixes import Edit, Fix, Form

FIX = Fix(
    finding="GR-V2-UNLIMITED-COMPACTS",
    why="no proactive compaction when max_input_tokens <= 0 (nothing to protect)",
    forms=(
        Form(
            versions="*",
            edits=(
                Edit(
                    "engine/evaluator.py",
                    "                threshold = int(self.eval_cap.max_input_tokens * threshold_ratio)\n",
                    "                threshold = int(self.eval_cap.max_input_tokens * threshold_ratio)\n"
                    "                if self.eval_cap.max_input_tokens <= 0:\n"
                    '                    threshold = float("inf")\n',
                ),
            ),
        ),
    ),
)
