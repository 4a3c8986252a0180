"""This repository's suites run with ctxaudit's pytest setup (ctxaudit/pytest_plugin.py:
profiles, the registered targets' options, failure output), and the fault-injection
tests' tally (tests/fault_tally.py)."""

pytest_plugins = ["ctxaudit.pytest_plugin", "tests.fault_tally"]
