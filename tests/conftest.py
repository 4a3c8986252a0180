"""This repository's suites run with ctxaudit's pytest setup (ctxaudit/pytest_plugin.py:
profiles, the registered targets' options, failure output), and the fault-injection
tests' tally (tests/fault_tally.py), and a per-test CPU tally when asked (tests/cpu_tally.py)."""

import signal

import pytest

pytest_plugins = ["ctxaudit.pytest_plugin", "tests.fault_tally", "tests.cpu_tally"]


def pytest_configure(config: pytest.Config) -> None:
    """The interrupt tests send SIGINT to the commands they start, which must get it as
    from a terminal. A shell starts a background job (``cmd &`` without job control: a
    CI step, ``nohup``) with SIGINT ignored, and every process it starts inherits that:
    there the commands rightly ignored the tests' SIGINT, and the tests failed. A
    handler here (not "ignored") lets each process this one starts begin with SIGINT's
    default, as in a terminal."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
