"""pydantic-ai's own bug history as seed-free programs (docs/notes/bug-history-pydantic-ai.md).

As langchain's (``ctxaudit/targets/langchain/history``): each :class:`Bug` is an upstream
report of the domain (UsageLimits and the usage they meter) that a plain pydantic-ai
program shows, exit 1 when it shows, 0 when not, anything else the program's own error.
``fails_on``/``holds_on`` name only releases whose environments the suite builds anyway;
``before`` is the last release before the fix, and ``before_unchecked`` says why the
program does not run there when it cannot.
"""

from __future__ import annotations

from pathlib import Path

from ctxaudit.targets.bug_history import Bug

HERE = Path(__file__).parent


BUGS: tuple[Bug, ...] = (
    Bug(
        "pydantic/pydantic-ai#2978",
        "parallel tool calls over tool_calls_limit start running before the limit raises",
        "#2978 (pydantic-ai-slim 1.0.15)",
        HERE / "pai_2978_parallel_calls_over_limit.py",
        fails_on=(),
        holds_on=("2.21.0", "2.40.0", "2.68.0"),
        before="1.0.14",
        before_unchecked=(
            "1.0.14's environment, resolved from its own pins, fails at import: "
            "opentelemetry._events is gone from the opentelemetry-api it resolves to "
            "(dependency drift); a lock pinning an older opentelemetry-api is needed"
        ),
    ),
)
