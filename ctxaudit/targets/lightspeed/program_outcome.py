"""What a known finding's program showed on a tree, in the three outcomes: its
failure message (it reproduces when the message names the finding's property), None
(it ran to its end: it does not reproduce), or an entry in ``unchecked`` (ctxaudit
could not check it) with :class:`~ctxaudit.outcomes.CouldNotCheck` raised.

A program reproduces only by an AssertionError of the lockstep. Any other exception
ends it before its verdict, so it tells nothing of the finding, whoever raised it:
ctxaudit's harness (``could_not_check`` says so), or the tree and what it runs on (an
HTTP client that timed out on a loaded machine, the app's own error). Both are recorded
as could not check, with the exception and where it was raised; the target's is raised
again as it was, so the test that ran the program shows its traceback. Before this, such
a program read "does not reproduce" in the audit.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping

from ctxaudit.outcomes import CouldNotCheck, could_not_check, where_raised


def outcome(
    run: Callable[[], str | None], finding_id: str, unchecked: MutableMapping[str, str]
) -> str | None:
    """``run()``'s failure message, or None; an exception other than the program's
    verdict is recorded in ``unchecked[finding_id]`` and raised (ctxaudit's own as
    CouldNotCheck)."""
    try:
        return run()
    except Exception as exc:
        why = could_not_check(exc)
        if why is None:  # the tree's (or what it runs on): raised as it was, recorded
            unchecked[finding_id] = (
                f"its program ended in {type(exc).__name__}: {_first_line(exc)} "
                f"(at {where_raised(exc)}) before its verdict"
            )
            raise
        unchecked[finding_id] = why
        raise CouldNotCheck(f"{finding_id}'s program could not be checked here: {why}") from exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else "(no message)"
