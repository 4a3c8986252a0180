"""GR-B3-LOOP-CALL-AT-CAP (B3): before each LLM call the loop checked the hard caps
(``EvalCap.check()``) and its own count of LLM calls, never the iteration credit, so
tool calls could bring the credit to the cap and the LLM was still called (and the
valve compacted for that call). The fix adds the credit to the loop's check, before the
valve, with the message ``record_llm_call`` gives. ``EvalCap.check()`` itself stays a
check of the hard caps (B2/B4: a first attempt that changed it broke them)."""

from ctxaudit.fixes import Edit, Fix, Form

FIX = Fix(
    finding="GR-B3-LOOP-CALL-AT-CAP",
    why="the loop's check before each call includes the iteration credit, before the valve",
    forms=(
        Form(
            versions="*",
            edits=(
                Edit(
                    "engine/evaluator.py",
                    "            cap_error = self.eval_cap.check()\n",
                    "            cap_error = self.eval_cap.check()\n"
                    "            if not cap_error and 0 < self.eval_cap.max_iterations <= self.eval_cap.iteration_credit:\n"
                    "                cap_error = self.eval_cap.record_llm_call()  # refuses: the credit is at the cap\n",
                ),
            ),
        ),
    ),
)
# ruff: noqa: E501  (edits quote the target's lines verbatim)
