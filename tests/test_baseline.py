"""A baseline the maintainers own (``ctxaudit baseline``, ``audit --baseline``).

A toy target with one known finding, TOY-KNOWN, that reproduces while ``TOY_KNOWN``
names the version: the baseline written for it accepts it (exit 0); without its entry
the gate fails naming it; with the entry but the finding gone the gate fails naming
the entry to remove. A baseline file that cannot be read is one line, exit 2, before
anything runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ctxaudit import baseline, cli, result_cache, targets
from ctxaudit.targets.base import Described, FindingsCheck, KnownFinding, known_entry
from tests.faults.test_interrupt import SUITE, Toy

KNOWN = KnownFinding("TOY-KNOWN", "T1", "the toy's known break", "always", "test_known.py")

KNOWN_TEST = """
import os

def test_known_reproduces():
    assert os.environ.get("TOY_KNOWN") == os.environ["TOY_VERSION"], "does not reproduce"
"""


class KnownToy(Toy):
    """The toy, with one known finding whose check is ``test_known.py``."""

    def findings(self) -> list[KnownFinding]:
        return [KNOWN]

    def findings_check(self, target: Described, tmp: Path) -> FindingsCheck | None:
        def read(outcome: Mapping[str, str]) -> list[dict[str, Any]]:
            passed = any(v == "passed" for k, v in outcome.items() if "test_known" in k)
            return [known_entry(KNOWN, registered=True, affects=passed)]

        env = {**os.environ, "TOY_VERSION": target.version}
        return FindingsCheck([str(self.home / "test_known.py")], env, read)


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "toy"
    home.mkdir()
    (home / "test_toy.py").write_text(SUITE)
    (home / "test_known.py").write_text(KNOWN_TEST)
    monkeypatch.setattr(result_cache, "CACHE_DIR", tmp_path / "steps")
    targets.register(KnownToy(home))
    try:
        yield tmp_path
    finally:
        targets.unregister("toy")


def _audit(tmp: Path, *more: str) -> int:
    argv = ["audit", "--target", "toy==1.0", "--profile", "ci", "--seed", "1", "--no-mutation"]
    return cli.main([*argv, "--out", str(tmp / "reports"), "--no-cache", *more])


def test_the_gate_owns_its_known_findings(
    toy: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TOY_KNOWN", "1.0")
    assert _audit(toy) == 1  # without a baseline a known finding fails, as before
    capsys.readouterr()

    file = toy / "ctxaudit-baseline.toml"
    argv = ["baseline", "--target", "toy==1.0", "--seed", "1", "--out", str(file)]
    assert cli.main(argv) == 0
    said = capsys.readouterr()
    assert "1 known finding(s) (TOY-KNOWN)" in said.out
    # its audit's reports are in a folder gone by now: no line names a file there
    assert "ctxaudit-baseline-" not in said.out + said.err, said.out + said.err
    written = baseline.load(file)
    assert [(e.id, e.target, e.property, e.why) for e in written.entries] == [
        ("TOY-KNOWN", "toy", "T1", "")
    ]

    assert _audit(toy, "--baseline", str(file)) == 0
    out = capsys.readouterr().out
    assert "toy-1.0: accepted by the baseline" in out and "TOY-KNOWN" in out, out
    assert "no reason given (why) for TOY-KNOWN" in out

    empty = toy / "empty.toml"
    empty.write_text("")
    assert _audit(toy, "--baseline", str(empty)) == 1
    assert "known finding TOY-KNOWN, not in the baseline" in capsys.readouterr().out

    monkeypatch.setenv("TOY_KNOWN", "none")  # fixed: its entry must go
    assert _audit(toy, "--baseline", str(file)) == 1
    out = capsys.readouterr().out
    assert "TOY-KNOWN no longer reproduces on any audited toy version: remove it" in out, out


def test_a_new_finding_fails_whatever_the_baseline(
    toy: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TOY_KNOWN", "1.0")
    monkeypatch.setenv("TOY_BREAK", "1.0")
    file = toy / "b.toml"
    file.write_text('[[accepted]]\nid = "TOY-KNOWN"\ntarget = "toy"\nwhy = "upstream"\n')
    assert _audit(toy, "--baseline", str(file)) == 1
    assert "FAILS beyond the baseline: new finding: T1: the toy breaks" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (None, "no such file"),
        ("[[accepted]\n", "not TOML"),
        ("[other]\n", "unknown table(s) other"),
        ('[[accepted]]\ntarget = "toy"\n', "entry 1 has no id"),
        ('[[accepted]]\nid = "X"\ntarget = "toy"\nreason = "r"\n', "unknown key(s) reason"),
        ('[[accepted]]\nid = "X"\ntarget = "t"\n[[accepted]]\nid = "X"\ntarget = "t"\n',
         "listed twice: X"),
        # an entry that names nothing the registry knows would match nothing, silently
        ('[[accepted]]\nid = "X"\ntarget = "nope"\n', "entry 1 (X): unknown target 'nope'"),
        ('[[accepted]]\nid = "GR-NO-SUCH"\ntarget = "gitreins"\n',
         "entry 1 (GR-NO-SUCH): gitreins registers no finding 'GR-NO-SUCH'"),
        ('[[accepted]]\nid = "GR-B3-LOOP-CALL-AT-CAP"\ntarget = "gitreins"\nproperty = "S6"\n',
         "its property is B3, not 'S6'"),
        # a byte-order mark (an editor's) is read past: the entry is judged, not "not TOML"
        ('\ufeff[[accepted]]\nid = "X"\ntarget = "nope"\n', "unknown target 'nope'"),
    ],
)  # fmt: skip
def test_a_bad_baseline_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str | None, says: str
) -> None:
    file = tmp_path / "b.toml"
    if text is not None:
        file.write_text(text)
    argv = ["audit", "--target", "ledger", "--baseline", str(file), "--out", str(tmp_path)]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and says in err, err
    assert not (tmp_path / "matrix.md").exists()


def _report(target: str, version: str, known: list[str], new: int = 0) -> SimpleNamespace:
    return SimpleNamespace(
        target=target,
        version=version,
        known=[{"id": k, "affects": True} for k in known] + [{"id": "Z", "affects": False}],
        findings=[SimpleNamespace(message=f"new {i}", properties=["P1"]) for i in range(new)],
    )


def test_judge_reads_every_version_of_a_target() -> None:
    b = baseline.Baseline(
        Path("b.toml"),
        (
            baseline.Entry("A", "t", "P1", "why"),
            baseline.Entry("B", "t", "P2", "why"),
            baseline.Entry("C", "other", "P3", "why"),  # a target this run does not audit
        ),
    )
    # B reproduces on one version only: it is not stale
    v = baseline.judge(b, [_report("t", "1", ["A"]), _report("t", "2", ["A", "B"])])
    assert not v.fails and v.accepted == {"t-1": ["A"], "t-2": ["A", "B"]}
    v = baseline.judge(b, [_report("t", "1", ["A"])])
    assert v.fails and [e.id for e in v.stale] == ["B"] and not v.failing
    v = baseline.judge(b, [_report("t", "1", ["A", "B", "D"], new=1)])
    assert v.failing == {"t-1": ["new finding: new 0", "known finding D, not in the baseline"]}
    # a new failure can mask a known finding's check: B is not called stale then
    v = baseline.judge(b, [_report("t", "1", ["A"], new=3)])
    assert v.failing == {"t-1": ["new finding: new 0 (and 2 more: P1 3; see findings.md)"]}
    assert not v.stale
