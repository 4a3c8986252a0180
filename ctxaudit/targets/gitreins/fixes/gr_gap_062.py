# ruff: noqa: E501  (edits quote the target's lines verbatim)
"""GR-GAP-062 (V7): before 0.15.0 the valve compared the largest single prompt with the
threshold; the fix reads the meter the input cap enforces (what 0.15.0 does)."""

from ctxaudit.fixes import Edit, Fix, Form

FIX = Fix(
    finding="GR-GAP-062",
    why="the valve reads EvalCap.cumulative_input_tokens, the sum the input cap meters",
    forms=(
        Form(
            versions="<0.15.0",
            edits=(
                Edit(
                    "engine/evaluator.py",
                    "            if cumulative_prompt_tok > 0 and compaction_count < MAX_COMPACTIONS:",
                    "            if self.eval_cap.cumulative_input_tokens > 0 and compaction_count < MAX_COMPACTIONS:",  # noqa: E501
                ),
                Edit(
                    "engine/evaluator.py",
                    "                if cumulative_prompt_tok > threshold:",
                    "                if self.eval_cap.cumulative_input_tokens > threshold:",
                ),
            ),
        ),
    ),
)
