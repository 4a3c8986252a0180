"""A target's own tests (its *peer suite*): which of them ctxaudit runs, and how.

A target declares them in its ``mutation.toml``, as the ``[<name>.peer]`` table
(mutation/README.md, "Peer comparison"): the candidate files (globs relative to the
folder that holds its ``tests/``), the regex a file's text must match to be selected, the
pytest arguments (``{peer}`` is that folder), and the tests left out, each with its
reason. Two steps read the one declaration: the mutation audit runs the same mutants
against them (``mutation/peer.py``), and the fix audit runs them on the fixed trees, since
a fix must also pass the harness's own tests except those that pin the bug
(``ctxaudit/fixaudit/own_tests.py``).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class OwnTestsError(ValueError):
    """A ``[<name>.peer]`` table that cannot be used; the message is one line."""


@dataclass(frozen=True)
class PeerSuite:
    """The target's own tests, as its ``mutation.toml`` selects them."""

    name: str
    #: a test file is selected when its text matches this regex (default: every file)
    tests_matching: re.Pattern[str]
    #: ``{peer}`` is replaced by the folder that holds the suite's ``tests/``
    pytest_args: tuple[str, ...]
    deselect: tuple[tuple[str, str], ...] = ()
    selection_reason: str = ""
    #: the candidate test files: globs (``**`` for any depth) or paths relative to that
    #: folder; the default is the top level of ``tests/``
    tests: tuple[str, ...] = ("tests/test_*.py",)
    #: how the report names the suite in its tables ("gitreins' tests")
    label: str = ""

    def args(self, root: Path) -> list[str]:
        """Its pytest arguments for the suite in ``root``: its own, then each test it
        leaves out deselected."""
        own = [a.replace("{peer}", str(root)) for a in self.pytest_args]
        return own + [f"--deselect={test}" for test, _ in self.deselect]


def parse(table: dict[str, Any], target: str) -> PeerSuite:
    """The ``[<target>.peer]`` table read (every left-out test and the selection with a
    reason)."""
    tests = table.get("tests", list(PeerSuite.tests))
    if isinstance(tests, str):
        tests = [tests]
    if not tests or not all(isinstance(t, str) and t and not t.startswith("/") for t in tests):
        raise OwnTestsError(
            f"mutation.toml: [{target}.peer] tests: relative paths or globs, at least one"
        )
    try:
        return PeerSuite(
            name=str(table["name"]),
            tests_matching=re.compile(str(table.get("tests_matching", "")), re.M),
            pytest_args=tuple(str(a) for a in table.get("pytest_args", ())),
            deselect=tuple(
                (d["test"], _reason(d.get("reason"), target)) for d in table.get("deselect", ())
            ),
            selection_reason=_reason(table.get("selection_reason"), target),
            tests=tuple(tests),
            label=str(table.get("label", _possessive(target) + " tests")),
        )
    except (KeyError, TypeError, re.error) as exc:
        raise OwnTestsError(f"mutation.toml: [{target}.peer]: bad or missing {exc}") from None


def declared(config: Path, target: str) -> PeerSuite | None:
    """The own tests ``config`` (a target's ``mutation.toml``) declares for its table
    ``[<target>]``; None when it declares none."""
    with config.open("rb") as fh:
        table = tomllib.load(fh).get(target, {})
    return parse(table["peer"], target) if "peer" in table else None


def select_tests(root: Path, peer: PeerSuite) -> list[str]:
    """The peer's test files under ``root``: those ``peer.tests`` names (paths or globs,
    ``**`` for any depth, relative to ``root``) whose text matches ``peer.tests_matching``;
    absolute, sorted, each once."""
    found: set[Path] = set()
    for pattern in peer.tests:
        found.update(p for p in root.glob(pattern) if p.is_file() and p.suffix == ".py")
    return sorted(
        str(p)
        for p in found
        if peer.tests_matching.search(p.read_text(encoding="utf-8", errors="replace"))
    )


def _reason(value: object, target: str) -> str:
    reason = str(value or "").strip()
    if not reason:
        raise OwnTestsError(
            f"mutation.toml: [{target}.peer]: a selection or deselection has no reason"
        )
    return reason


def _possessive(name: str) -> str:
    return name + ("'" if name.endswith("s") else "'s")
