"""GR-B3-FRACTIONAL-ITERATIONS (B3): the loop stops after int(max_iterations) LLM calls;
the fix rounds the loop's limit up, so EvalCap's own check (credit >= cap) decides."""

from ctxaudit.fixes import Edit, Fix, Form

FIX = Fix(
    finding="GR-B3-FRACTIONAL-ITERATIONS",
    why="max_iterations_int rounds a fractional cap up instead of down",
    forms=(
        Form(
            versions="*",
            edits=(
                Edit(
                    "engine/eval_cap.py",
                    "        return int(self.max_iterations)\n",
                    "        return -int(-self.max_iterations // 1)  # ceil\n",
                ),
            ),
        ),
    ),
)
