"""pytest plugin used by the fix audit: replay one shrunk Hypothesis example per test.

``CTXAUDIT_REPLAY`` is a JSON object ``{nodeid: [hypothesis_version, blob]}`` (the
``@reproduce_failure`` a report printed). Each named test runs exactly that example,
as if decorated with ``@reproduce_failure``: it fails with the original error when the
example still fails, and with ``DidNotReproduce`` ("completed successfully") when it
now passes. Stateful tests (``run_state_machine_as_test``) get the blob through their
machine class.

One difference from a bare ``@reproduce_failure``, so a replay on a fixed tree says
what it seems to say: each replayed test records, as the user property ``replay``, how
many choices the example had (``choices``), how many the replay drew (``drawn``) and
the index of the first draw that did not fit the example (``misaligned_at``; None when
every draw fit). A shrunk state machine's choices end at its failing step; on a tree
where that step now passes, the machine goes on ("one more step?") and runs out of
data: ``DidNotReproduce`` "the shape of the test data has changed". With every choice
drawn as recorded (``drawn == choices``, nothing misaligned) that means the example ran
to its end and did not fail; a replay that misaligned ran another example and says
nothing about this one (:func:`ran_through`).
"""

from __future__ import annotations

import ast
import json
import os
import re
from typing import Any

import pytest
from hypothesis import core, stateful
from hypothesis.internal.conjecture.data import ConjectureData

_BLOB_RE = re.compile(r"@reproduce_failure\('([^']+)', (b'[^']*'|b\"[^\"]*\")\)")
_current: tuple[str, bytes] | None = None
_original = stateful.get_state_machine_test
_decode = core.decode_failure
_for_choices = ConjectureData.for_choices.__func__  # type: ignore[attr-defined]
_decoded: dict[int, int] = {}  # id(decoded choices) -> their count
_runs: list[tuple[int, ConjectureData]] = []  # (choice count, data) of this test's replay


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


def _decode_seen(blob: bytes) -> Any:
    choices = list(_decode(blob))
    _decoded[id(choices)] = len(choices)
    return choices


def _for_choices_seen(cls: Any, choices: Any, **kwargs: Any) -> Any:
    data = _for_choices(cls, choices, **kwargs)
    if id(choices) in _decoded:
        _runs.append((_decoded.pop(id(choices)), data))
    return data


stateful.get_state_machine_test = _machine_test  # type: ignore[assignment]


def ran_through(test: dict[str, Any]) -> bool:
    """The replayed example ran to its end without failing: the test passed, Hypothesis
    says it completed, or it ran out of data after drawing every choice as recorded (a
    state machine whose failing step now passes). Never when a draw misaligned."""
    rec = test.get("replay") or {}
    if rec.get("misaligned_at") is not None:
        return False
    if test["outcome"] == "passed":
        return True
    text = test.get("longrepr", "")
    if "DidNotReproduce" not in text:
        return False
    if "completed successfully" in text:
        return True
    drawn, choices = rec.get("drawn"), rec.get("choices")
    return "shape of the test data" in text and drawn is not None and drawn == choices


def record(runs: list[tuple[int, Any]]) -> dict[str, Any]:
    """What the replay of one test did: the example's choices, the replay's draws, the
    first draw that did not fit the example (None: all fit)."""
    if not runs:
        return {"choices": None, "drawn": None, "misaligned_at": None}
    count, data = runs[-1]
    misaligned = getattr(data, "misaligned_at", None)
    return {
        "choices": count,
        "drawn": int(getattr(data, "index", 0)),
        "misaligned_at": None if misaligned is None else int(misaligned[0]),
    }


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    global _current
    blob = _replays().get(item.nodeid)
    _current = blob
    inner = getattr(item, "obj", None)
    if blob is not None and inner is not None and hasattr(inner, "hypothesis"):
        inner._hypothesis_internal_use_reproduce_failure = blob
    if blob is not None:
        _runs.clear()
        core.decode_failure = _decode_seen  # type: ignore[assignment]
        ConjectureData.for_choices = classmethod(_for_choices_seen)  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        _current = None
        if blob is not None:
            core.decode_failure = _decode  # type: ignore[assignment]
            ConjectureData.for_choices = classmethod(_for_choices)  # type: ignore[method-assign,assignment]
            item.user_properties.append(("replay", record(_runs)))
