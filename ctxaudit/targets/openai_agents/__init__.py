"""openai-agents (PyPI ``openai-agents``): its sessions (``agents.memory``), the runner's
writes to them and ``OpenAIResponsesCompactionSession``, as a ctxaudit target."""
