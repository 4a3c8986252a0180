"""A finding's program is judged by what it says, never by how it died: exit 1 from
``sys.exit(1)`` reproduces, exit 0 does not, and a program that crashed (an uncaught
exception, which Python also ends with exit 1) is ctxaudit's error, never a verdict."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxaudit import warm
from tests.finding_programs import reproduces


@pytest.fixture(autouse=True, params=["warm", "cold"])
def served(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each judgement both forked from a warm interpreter and in a fresh one."""
    monkeypatch.setenv("CTXAUDIT_WARM", "1" if request.param == "warm" else "0")
    warm.close_all()
    yield request.param
    forked = sum(server.served for server in warm._servers.values())
    warm.close_all()
    assert (forked > 0) == (request.param == "warm"), forked


def program(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "prog.py"
    path.write_text(body)
    return path


def test_an_exit_1_reproduces_and_an_exit_0_does_not(tmp_path: Path) -> None:
    broken = program(tmp_path, "import sys\nprint('BROKEN: yes')\nsys.exit(1)\n")
    assert reproduces("F", ["F"], broken, "here")
    assert not reproduces("F", ["F"], program(tmp_path, "print('holds')\n"), "here")


def test_a_program_that_crashed_is_no_verdict(tmp_path: Path) -> None:
    crashed = program(tmp_path, "import no_such_module_here\n")
    with pytest.raises(RuntimeError, match="could not run"):
        reproduces("F", ["F"], crashed, "here")
