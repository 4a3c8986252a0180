"""This repository's suites run with ctxaudit's pytest setup (ctxaudit/pytest_plugin.py:
profiles, the registered targets' options, failure output)."""

pytest_plugins = ["ctxaudit.pytest_plugin"]
