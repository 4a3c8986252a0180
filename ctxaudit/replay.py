"""Replay one shrunk Hypothesis example: the one mechanism behind ``--replay=BLOB`` and
``CTXAUDIT_REPLAY``.

A replay is asked for in one of two ways, both read when pytest is configured:

- ``--replay=BLOB`` (the command a failure report prints, ``bin/ctxaudit test NODEID
  --replay=BLOB``): every test the session runs replays that example, under the
  running Hypothesis version;
- ``CTXAUDIT_REPLAY``, a JSON object ``{nodeid: [hypothesis_version, blob]}`` (the
  ``@reproduce_failure`` a report printed; :func:`environ` writes it): each named test
  replays its own example. The fix audit's runs and ``ctxaudit attribute`` set it.

:func:`install` (called by ``ctxaudit.failure_output.register``, which ctxaudit's
pytest setup, ``ctxaudit/pytest_plugin.py``, calls in every suite run) registers the
:class:`Replay` plugin when either is set; nothing of Hypothesis is touched otherwise.
A replayed test runs exactly that example, as if decorated with ``@reproduce_failure``
(:func:`replaying`): it fails with the original error when the example still fails,
and with ``DidNotReproduce`` ("completed successfully") when it now passes. A
``@given`` test gets the example through its own attribute; a state machine
(``run_state_machine_as_test``, a machine's ``TestCase``) through
``RuleBasedStateMachine``, whose attribute Hypothesis reads from the machine class.
Both are set for the test's call only, and restored after it.

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
from collections.abc import Generator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest

#: the environment variable of a replay by node id
ENV = "CTXAUDIT_REPLAY"
#: the ``@reproduce_failure('VERSION', b'BLOB')`` Hypothesis prints: its version and the
#: blob's bytes literal
BLOB_RE = re.compile(r"@reproduce_failure\('([^']+)', (b'[^']*'|b\"[^\"]*\")\)")
_ATTR = "_hypothesis_internal_use_reproduce_failure"
_PLUGIN = "ctxaudit-replay"


@dataclass(frozen=True)
class Example:
    """One shrunk example: the Hypothesis version that printed it, and its blob."""

    version: str
    blob: bytes


@dataclass
class _Draws:
    """The (choice count, data) of each run of a decoded example, in order."""

    runs: list[tuple[int, Any]] = field(default_factory=list)


def invocation() -> str:
    """How a printed ctxaudit command starts where this ctxaudit is: ``bin/ctxaudit`` in
    a checkout (its bootstrap, run from the checkout's root), ``ctxaudit`` installed
    (the entry point, from any folder; ``ctxaudit test`` and ``ctxaudit mutation`` run
    in the installed build's copy of the suites, where a report's test paths are)."""
    from ctxaudit.paths import IN_CHECKOUT

    return "bin/ctxaudit" if IN_CHECKOUT else "ctxaudit"


#: the checkout's ways of starting a command that the installed entry point spells its
#: own way (``python -m mutation``: the mutation runner, not importable when installed)
_CHECKOUT_FORMS = (("bin/ctxaudit ", ""), ("python -m mutation ", "mutation "))


def printed(command: str) -> str:
    """``command``, written as a checkout runs it (``bin/ctxaudit test ...``,
    ``CTXAUDIT_FINDINGS=... bin/ctxaudit attribute ...``, ``python -m mutation run
    ...``), as it runs where this ctxaudit is (:func:`invocation`). Leading
    ``NAME=value`` assignments are kept; anything else is returned as it is."""
    words = command.split(" ")
    i = 0
    while i < len(words) and re.match(r"^[A-Z_][A-Z0-9_]*=", words[i]):
        i += 1
    head, rest = " ".join(words[:i]), " ".join(words[i:])
    for form, sub in _CHECKOUT_FORMS:
        if rest.startswith(form):
            rest = f"{invocation()} {sub}{rest.removeprefix(form)}"
            break
    return f"{head} {rest}" if head else rest


def parse_blob(reproduction: str) -> tuple[str, str] | None:
    """(version, blob literal) of the first ``@reproduce_failure`` in a report's text."""
    m = BLOB_RE.search(reproduction)
    return (m.group(1), m.group(2)) if m else None


def blob_text(literal: str) -> str:
    """The blob of a bytes literal (``b'AXic'`` -> ``AXic``), as ``--replay`` takes it."""
    value = ast.literal_eval(literal)
    return value.decode("ascii") if isinstance(value, bytes) else str(value)


def environ(replays: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """The environment that asks a pytest run with ctxaudit's pytest setup to replay
    these examples: ``{nodeid: [hypothesis_version, blob literal]}``."""
    return {ENV: json.dumps({k: list(v) for k, v in replays.items()})}


def _from_environ() -> dict[str, Example]:
    raw = json.loads(os.environ.get(ENV) or "{}")
    return {k: Example(v[0], ast.literal_eval(v[1])) for k, v in raw.items()}


def addoption(group: Any) -> None:
    """``--replay=BLOB`` in the option group of ``ctxaudit.failure_output``."""
    group.addoption(
        "--replay",
        default="",
        metavar="BLOB",
        help="replay the one example a failure printed (the blob in its replay command): "
        "no search, no shrinking",
    )


def install(config: pytest.Config) -> None:
    """Register the :class:`Replay` plugin when a replay is asked for (``--replay``, or
    ``CTXAUDIT_REPLAY``); once per session."""
    if config.pluginmanager.has_plugin(_PLUGIN):
        return
    given = config.getoption("--replay", default="") or ""
    by_nodeid = _from_environ()
    if not given and not by_nodeid:
        return
    import hypothesis

    every = Example(hypothesis.__version__, given.encode("ascii")) if given else None
    config.pluginmanager.register(Replay(every, by_nodeid), _PLUGIN)


class Replay:
    """pytest plugin: each test a replay is asked for runs that example alone, and
    records how the replay drew it (the user property ``replay``)."""

    def __init__(self, every: Example | None, by_nodeid: dict[str, Example]) -> None:
        self.every = every
        self.by_nodeid = by_nodeid

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        example = self.by_nodeid.get(item.nodeid) or self.every
        if example is None:
            yield
            return
        with replaying(item, example) as draws:
            yield
        item.user_properties.append(("replay", record(draws.runs)))


@contextmanager
def replaying(item: pytest.Item, example: Example) -> Iterator[_Draws]:
    """Make the item's Hypothesis test replay ``example`` while it runs: a ``@given``
    test through its own attribute, a state machine through ``RuleBasedStateMachine``
    (which ``run_state_machine_as_test`` reads from the machine class). Yields the
    draws the replay made (:func:`record`)."""
    from hypothesis.stateful import RuleBasedStateMachine

    obj = getattr(item, "obj", None)
    fn = getattr(obj, "__func__", obj)  # a method's function: a bound method takes no attribute
    given = getattr(fn, "hypothesis", None) is not None  # a @given test (a machine's is not)
    owner: Any = fn if given else RuleBasedStateMachine
    had = _ATTR in vars(owner)
    saved = vars(owner).get(_ATTR)
    setattr(owner, _ATTR, (example.version, example.blob))
    try:
        with _counting_draws() as draws:
            yield draws
    finally:
        if had:
            setattr(owner, _ATTR, saved)
        else:
            delattr(owner, _ATTR)


@contextmanager
def _counting_draws() -> Iterator[_Draws]:
    """While it lasts, note each decoded example's choice count and the data a run
    drew it into (Hypothesis' ``decode_failure`` and ``ConjectureData.for_choices``,
    wrapped; restored after)."""
    from hypothesis import core
    from hypothesis.internal.conjecture.data import ConjectureData

    draws = _Draws()
    decode = core.decode_failure
    for_choices = ConjectureData.for_choices.__func__  # type: ignore[attr-defined]
    decoded: dict[int, int] = {}  # id(decoded choices) -> their count

    def decode_seen(blob: bytes) -> Any:
        choices = list(decode(blob))
        decoded[id(choices)] = len(choices)
        return choices

    def for_choices_seen(cls: Any, /, choices: Any, **kwargs: Any) -> Any:
        data = for_choices(cls, choices, **kwargs)
        if id(choices) in decoded:
            draws.runs.append((decoded.pop(id(choices)), data))
        return data

    core.decode_failure = decode_seen
    ConjectureData.for_choices = classmethod(for_choices_seen)  # type: ignore[method-assign,assignment]
    try:
        yield draws
    finally:
        core.decode_failure = decode
        ConjectureData.for_choices = classmethod(for_choices)  # type: ignore[method-assign,assignment]


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
