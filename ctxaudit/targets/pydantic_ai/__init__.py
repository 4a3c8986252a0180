"""pydantic-ai as a ctxaudit target: ``UsageLimits`` (B1-B3). The target is
:mod:`ctxaudit.targets.pydantic_ai.target`."""
