"""``audit --junit-xml FILE``: the three outcomes as JUnit XML, on the toy target with a
known finding (``tests/test_baseline.py``)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ctxaudit import cli
from tests.test_baseline import _audit, toy  # noqa: F401  (the fixture)


def _cases(path: Path) -> dict[str, tuple[str, str]]:
    """name -> (outcome tag or "passed", message) of every test case."""
    root = ET.parse(path).getroot()
    out = {}
    for case in root.iter("testcase"):
        child = next(iter(case), None)
        out[case.get("name", "")] = (
            "passed" if child is None else child.tag,
            "" if child is None else child.get("message", ""),
        )
    return out


def test_each_outcome_is_its_own_junit_element(
    toy: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    xml = toy / "junit" / "ctxaudit.xml"
    monkeypatch.setenv("TOY_KNOWN", "none")
    assert _audit(toy, "--junit-xml", str(xml)) == 0
    assert _cases(xml) == {"T1 toy holds": ("passed", ""), "TOY-KNOWN (T1)": ("passed", "")}

    monkeypatch.setenv("TOY_KNOWN", "1.0")
    assert _audit(toy, "--junit-xml", str(xml)) == 1
    got = _cases(xml)
    assert got["T1 toy holds"] == ("failure", "T1 fails: known finding TOY-KNOWN")
    assert got["TOY-KNOWN (T1)"] == ("failure", "reproduces: the toy's known break")
    root = ET.parse(xml).getroot()
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("2", "2", "0")

    file = toy / "b.toml"
    file.write_text('[[accepted]]\nid = "TOY-KNOWN"\ntarget = "toy"\nwhy = "upstream"\n')
    assert _audit(toy, "--junit-xml", str(xml), "--baseline", str(file)) == 0
    got = _cases(xml)
    assert got["T1 toy holds"] == ("skipped", "fails, accepted by the baseline: TOY-KNOWN")
    assert got["TOY-KNOWN (T1)"][0] == "skipped"

    monkeypatch.setenv("TOY_BREAK", "1.0")
    assert _audit(toy, "--junit-xml", str(xml), "--baseline", str(file)) == 1
    got = _cases(xml)
    assert got["T1 toy holds"][0] == "failure" and "T1: the toy breaks" in got["T1 toy holds"][1]
    assert got["new finding 1 (T1)"] == ("failure", "T1: the toy breaks")

    monkeypatch.delenv("TOY_BREAK")
    monkeypatch.setenv("TOY_BROKEN", "1.0")  # the suite does not run: could not check
    assert _audit(toy, "--junit-xml", str(xml)) == 2  # fails (the known one), not all checked
    monkeypatch.setenv("TOY_KNOWN", "none")
    assert _audit(toy, "--junit-xml", str(xml)) == 2
    got = _cases(xml)
    assert got["T1 toy holds"][0] == "error" and "could not check" in got["T1 toy holds"][1]


def test_a_junit_path_that_is_a_folder_is_refused_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["audit", "--target", "ledger", "--junit-xml", str(tmp_path), "--out", str(tmp_path)]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"ctxaudit: --junit-xml {tmp_path}: a folder, not a file", err
