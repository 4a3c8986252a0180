"""The three outcomes of a check, and how a failed test is told apart.

A check of a target ends as one of:

- ``holds``: the property held on every example;
- ``fails``: the target breaks it (a finding, with its reproduction);
- ``could not check``: ctxaudit could not check it: an error in ctxaudit's own code
  (an adapter, the harness, the model), a tree it cannot drive, an environment that
  does not build. Never a finding about the target.

A test's failure is a finding when it arises from what the target did: an
``AssertionError`` or ``pytest.fail`` (a property check saw the target differ from the
model), an exception raised inside the target's own code, or a fault the harness
injected on purpose (:func:`injected`) that the target let escape. It is *could not
check* when it is :class:`CouldNotCheck` (raised by adapters and harnesses where they
cannot observe or drive the target: an unknown client shape, a tree they do not know),
one of Hypothesis' own errors (a health check, an unsatisfiable strategy, a flaky
test), or any other exception whose innermost frame of ours or the target's is ours.

"Ours" is a file of ctxaudit's own packages (``ctxaudit``, ``model``, ``mutation``)
or of its suites (``tests/``); the standard library and the test tools (pytest,
Hypothesis, pluggy) are neither ours nor the target's, and are looked through.
Everything else (the target's code and the libraries it runs on) is the target's.
"""

from __future__ import annotations

import contextlib
import os
import sys
import sysconfig
import traceback
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

from ctxaudit.paths import REPO_ROOT

HOLDS, FAILS, COULD_NOT_CHECK, NOT_CHECKED = "holds", "fails", "could not check", "not checked"


class CouldNotCheck(Exception):
    """ctxaudit could not check the target: its own error, a tree it cannot drive, an
    observation it cannot make. Raised by adapters and harnesses; never a finding."""


_INJECTED = "__ctxaudit_injected__"


def injected(exc: BaseException) -> BaseException:
    """Mark ``exc`` as a fault the harness hands the target on purpose (a failing LLM
    call, a failing write): raised from ctxaudit's code, it is the target's to handle,
    so if it escapes the target it is a finding, wherever it was raised."""
    setattr(exc, _INJECTED, True)
    return exc


def carries_injected(exc: BaseException) -> bool:
    """``exc`` is, or was raised from, a fault the harness injected (:func:`injected`)."""
    return any(getattr(link, _INJECTED, False) for link in _chain(exc))


@contextlib.contextmanager
def observing(what: str) -> Iterator[None]:
    """Any error while the harness observes the target (reads its stored rows, lists a
    conversation, parses an answer) is ctxaudit's: it cannot say what the target did.
    ``what`` names the observation in the message."""
    try:
        yield
    except CouldNotCheck:
        raise
    except Exception as exc:
        raise CouldNotCheck(f"could not observe {what}: {type(exc).__name__}: {exc}") from exc


_ROOT = REPO_ROOT

#: folders whose files are ctxaudit's own code (the ledger is a target: not listed)
OURS = tuple(str(_ROOT / name) + os.sep for name in ("ctxaudit", "model", "mutation", "tests"))
_STDLIB = tuple(
    str(Path(p).resolve()) + os.sep
    for p in {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]}
)
_TOOLS = tuple(f"{os.sep}{name}{os.sep}" for name in ("_pytest", "pytest", "pluggy", "hypothesis"))


def _whose(filename: str) -> str | None:
    """``"ours"``, ``"target"``, or None for a frame looked through."""
    path = os.path.abspath(filename)
    if path.startswith(OURS):
        return "ours"
    if "site-packages" not in path and path.startswith(_STDLIB):
        return None
    if any(tool in path for tool in _TOOLS) or filename.startswith("<"):
        return None
    return "target"


def _members(exc: BaseException) -> list[BaseException]:
    """The failures an exception stands for (an exception group's leaves)."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in _members(sub)]
    return [exc]


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        yield cur
        cur = cur.__cause__ or (None if cur.__suppress_context__ else cur.__context__)


def _raised_in(tb: TracebackType | None) -> tuple[str | None, str]:
    """Whose code raised: the innermost frame that is ours or the target's, and where."""
    frames = traceback.extract_tb(tb)
    for frame in reversed(frames):
        whose = _whose(frame.filename)
        if whose is not None:
            return whose, f"{frame.filename}:{frame.lineno} in {frame.name}"
    return None, (f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "?")


def where_raised(exc: BaseException) -> str:
    """Where ``exc`` was raised: the innermost frame that is ours or the target's."""
    return _raised_in(exc.__traceback__)[1]


def could_not_check(exc: BaseException) -> str | None:
    """Why ``exc`` (what a test raised) means ctxaudit could not check the target, with
    the error and where it arose; None when it is a finding about the target.

    Any one of the failures in a group that is ours makes the whole test *could not
    check*: the assertions beside it were made by a harness that is not working."""
    if _is_hypothesis_error(exc):  # a flaky test's group too: nothing it saw stands
        return f"{type(exc).__name__}: {_first_line(exc)}"
    for leaf in _members(exc):
        why = _leaf_could_not_check(leaf)
        if why is not None:
            return why
    return None


def _leaf_could_not_check(exc: BaseException) -> str | None:
    if _is_replay_answer(exc):
        return None
    for link in _chain(exc):
        if isinstance(link, CouldNotCheck):
            where = _raised_in(link.__traceback__)[1]
            return f"CouldNotCheck: {link} (at {where})"
    if _is_hypothesis_error(exc):
        return f"{type(exc).__name__}: {_first_line(exc)}"
    if isinstance(exc, AssertionError) or _is_pytest_fail(exc):
        return None
    if carries_injected(exc):
        return None
    whose, where = _raised_in(exc.__traceback__)
    if whose == "target":
        return None
    return f"{type(exc).__name__}: {_first_line(exc)} (ctxaudit's own code, at {where})"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else "(no message)"


def _is_hypothesis_error(exc: BaseException) -> bool:
    """Hypothesis' own errors, but for the answer of a replay (:func:`_is_replay_answer`)."""
    errors = sys.modules.get("hypothesis.errors")
    return (
        errors is not None
        and isinstance(exc, errors.HypothesisException)
        and not _is_replay_answer(exc)
    )


def _is_replay_answer(exc: BaseException) -> bool:
    """``DidNotReproduce``: in a replay of a shrunk example (``ctxaudit.replay``, the
    fix audit) it is the answer "the example no longer fails", which the replay reads."""
    errors = sys.modules.get("hypothesis.errors")
    return errors is not None and isinstance(exc, errors.DidNotReproduce)


def _is_pytest_fail(exc: BaseException) -> bool:
    outcomes = sys.modules.get("_pytest.outcomes")
    return outcomes is not None and isinstance(exc, outcomes.Failed)
