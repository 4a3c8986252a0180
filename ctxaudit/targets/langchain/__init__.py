"""langchain (v1) as a target: ``SummarizationMiddleware`` (C1, S6, S7) and the call-limit
middlewares (B3), each release in its own environment. What it is to the audit:
:mod:`ctxaudit.targets.langchain.target`; trees and environments:
:mod:`ctxaudit.targets.langchain.tree`.
"""
