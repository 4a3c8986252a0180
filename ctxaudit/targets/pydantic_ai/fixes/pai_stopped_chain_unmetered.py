"""PAI-STOPPED-CHAIN-UNMETERED (B1): when the provisional check of a continued response
stops the run, the requests already made are committed to the run's usage first."""

from ctxaudit.fixes import Edit, Fix, Form

GRAPH = "pydantic_ai/_agent_graph.py"
CHECK = (
    "        provisional.incr(continuation_usage)\n"
    "        run_context.usage_limits.check_tokens(provisional)\n"
)
COMMITTING = (
    "        provisional.incr(continuation_usage)\n"
    "        try:\n"
    "            run_context.usage_limits.check_tokens(provisional)\n"
    "        except exceptions.UsageLimitExceeded:\n"
    "            run_context.usage.incr(continuation_usage)  # billed: the run's usage keeps it\n"
    "            raise\n"
)

FIX = Fix(
    finding="PAI-STOPPED-CHAIN-UNMETERED",
    why="_check_continuation_usage adds the continued response's usage to the run's "
    "usage before it lets the limit's error propagate",
    forms=(Form(versions="*", edits=(Edit(GRAPH, CHECK, COMMITTING),)),),
)
