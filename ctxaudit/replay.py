"""pytest plugin used by the fix audit: replay one shrunk Hypothesis example per test.

``CTXAUDIT_REPLAY`` is a JSON object ``{nodeid: [hypothesis_version, blob]}`` (the
``@reproduce_failure`` a report printed). Each named test runs exactly that example,
as if decorated with ``@reproduce_failure``: it fails with the original error when the
example still fails, and with ``DidNotReproduce`` when it now passes. Stateful tests
(``run_state_machine_as_test``) get the blob through their machine class.
"""

from __future__ import annotations

import ast
import json
import os
import re
from typing import Any

import pytest
from hypothesis import stateful

_BLOB_RE = re.compile(r"@reproduce_failure\('([^']+)', (b'[^']*'|b\"[^\"]*\")\)")
_current: tuple[str, bytes] | None = None
_original = stateful.get_state_machine_test


def parse_blob(reproduction: str) -> tuple[str, str] | None:
    """(version, blob literal) of the first ``@reproduce_failure`` in a report's text."""
    m = _BLOB_RE.search(reproduction)
    return (m.group(1), m.group(2)) if m else None


def _replays() -> dict[str, tuple[str, bytes]]:
    raw = json.loads(os.environ.get("CTXAUDIT_REPLAY") or "{}")
    return {k: (v[0], ast.literal_eval(v[1])) for k, v in raw.items()}


def _machine_test(factory: Any, *args: Any, **kwargs: Any) -> Any:
    if _current is not None:
        factory._hypothesis_internal_use_reproduce_failure = _current
    return _original(factory, *args, **kwargs)


stateful.get_state_machine_test = _machine_test  # type: ignore[assignment]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    global _current
    blob = _replays().get(item.nodeid)
    _current = blob
    inner = getattr(item, "obj", None)
    if blob is not None and inner is not None and hasattr(inner, "hypothesis"):
        inner._hypothesis_internal_use_reproduce_failure = blob
    try:
        yield
    finally:
        _current = None
