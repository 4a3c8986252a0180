"""PAI-PRECHECK-SKIPS-OUTPUT (B3): the check before a request reads the output meter
too, strictly, like the input and total clauses beside it."""

from ctxaudit.fixes import Edit, Fix, Form

USAGE = "pydantic_ai/usage.py"
INPUT_CLAUSE = (
    "        if self.input_tokens_limit is not None and input_tokens > self.input_tokens_limit:\n"
    "            raise UsageLimitExceeded(\n"
    "                f'The next request would exceed the input_tokens_limit of {self.input_tokens_limit} ({input_tokens=})'\n"
    "            )\n"
)
OUTPUT_CLAUSE = (
    "\n"
    "        output_tokens = usage.output_tokens\n"
    "        if self.output_tokens_limit is not None and output_tokens > self.output_tokens_limit:\n"
    "            raise UsageLimitExceeded(\n"
    "                f'The next request would exceed the output_tokens_limit of {self.output_tokens_limit} ({output_tokens=})'\n"
    "            )\n"
)

FIX = Fix(
    finding="PAI-PRECHECK-SKIPS-OUTPUT",
    why="check_before_request refuses the next request while the output meter is past "
    "output_tokens_limit, as it does for the input and total meters",
    forms=(Form(versions="*", edits=(Edit(USAGE, INPUT_CLAUSE, INPUT_CLAUSE + OUTPUT_CLAUSE),)),),
)
