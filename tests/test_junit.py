"""``audit --junit-xml FILE`` and ``--sarif FILE``: what CI systems read, on the toy
target with a known finding (``tests/test_baseline.py``) and on a gitreins release."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

import pytest

from ctxaudit import cli, targets
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


# -- SARIF --------------------------------------------------------------------------------


def test_sarif_results_carry_the_property_and_the_baselines_reason(
    toy: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = toy / "ctxaudit.sarif"
    monkeypatch.setenv("TOY_KNOWN", "1.0")
    monkeypatch.setenv("TOY_BREAK", "1.0")
    file = toy / "b.toml"
    file.write_text('[[accepted]]\nid = "TOY-KNOWN"\ntarget = "toy"\nwhy = "upstream bug"\n')
    assert _audit(toy, "--sarif", str(out), "--baseline", str(file)) == 1
    log = json.loads(out.read_text())
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["T1"]
    known, new = run["results"]
    assert known["ruleId"] == "T1" and known["properties"]["finding"] == "TOY-KNOWN"
    assert known["suppressions"] == [{"kind": "external", "justification": "upstream bug"}]
    assert "locations" not in known  # the toy's finding has no fix: where is not known
    assert new["ruleId"] == "T1" and "suppressions" not in new
    assert new["message"]["text"] == "new finding on toy-1.0: T1: the toy breaks"


def test_a_known_finding_is_located_where_its_fix_changes_the_target() -> None:
    """GR-GAP-062's fix on a gitreins release: the line of the comparison it changes."""
    from ctxaudit import sarif
    from ctxaudit.pipeline.ci_files import locator
    from ctxaudit.targets.base import Described

    kind = targets.get("gitreins")
    (pinned,) = kind.expand("gitreins")
    root = kind.resolve(pinned.spec, None).root
    locate = locator([Described("gitreins", pinned.spec, pinned.version)])
    report = SimpleNamespace(target="gitreins", version=pinned.version)
    found = {}
    for fid in ("GR-B3-LOOP-CALL-AT-CAP", "GR-V8-THRESHOLD-UNVALIDATED"):
        where = locate(report, fid)
        assert where is not None, fid
        path, line = where
        edit = targets.fixes()[fid].forms[0].edits[0]
        text = (root / path).read_text().splitlines()
        assert edit.old.strip().splitlines()[0].strip() == text[line - 1].strip(), (fid, where)
        found[fid] = where
    assert locate(report, "NO-SUCH-FINDING") is None
    assert sarif.edit_location(root, "engine/eval_cap.py", "text that is not there") is None


def test_an_edit_that_starts_with_a_newline_is_located_at_its_first_line(tmp_path: Path) -> None:
    from ctxaudit import sarif

    (tmp_path / "m.py").write_text("import os\n\nimport asyncio\nx = 1\n")
    assert sarif.edit_location(tmp_path, "m.py", "\nimport asyncio\n") == ("m.py", 3)
    assert sarif.edit_location(tmp_path, "m.py", "x = 1") == ("m.py", 4)
    assert sarif.edit_location(tmp_path, "gone.py", "x") is None


def test_an_error_writing_the_ci_files_is_could_not_check(
    toy: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """ctxaudit's own error in writing them is no verdict on the target: exit 2, not 1."""
    from ctxaudit import sarif

    def broken(*args: object) -> None:
        raise OSError("No space left on device")

    monkeypatch.setattr(sarif, "write", broken)
    monkeypatch.setenv("TOY_KNOWN", "none")  # every property holds
    assert _audit(toy, "--sarif", str(toy / "out.sarif")) == 2
    err = capsys.readouterr().err
    assert "COULD NOT CHECK: writing the CI report files failed: OSError" in err, err
