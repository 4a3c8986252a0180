"""The peer comparison splits the kills only gitreins' tests make: outside the SPEC
(listed in mutation/outside_spec.toml with the reason) and against a SPEC property
(everything not listed, so an unlisted peer-only kill is never hidden)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mutation import peer_spec, report
from mutation.engine import MutationError
from tests.mutation.test_report_gate_shard import doc, m

TOML = """
[[outside_spec]]
target = "toy"
id = "toy.py:f:other:op:000000000002"
original = "'Increase'"
replacement = "'increase'"
reason = "message wording; no property reads it"

[[outside_spec]]
target = "other-target"
id = "toy.py:f:other:op:000000000003"
reason = "listed for another target: does not apply to toy"
"""


def toy_doc() -> dict:
    ms = [m(1, "other", "killed"), m(2, "other", "survived"), m(3, "other", "survived")]
    d = doc(ms)
    d["peer"] = {
        "name": "toy's own tests",
        "root": "/peer",
        "tests": ["tests/test_a.py"],
        "selection_reason": "all",
        "baseline": {"tests": 3, "failing": []},
        "timings": {"baseline": 0.5, "mutation": 1.0, "total": 2.0},
        "results": {
            ms[0]["id"]: ["killed", "tests/test_a.py::t1"],
            ms[1]["id"]: ["killed", "tests/test_a.py::test_wording"],
            ms[2]["id"]: ["killed", "tests/test_a.py::test_sentinel"],
        },
    }
    report.apply_gate(d, {})
    return d


def test_peer_only_kills_split_by_the_list(tmp_path: Path) -> None:
    listed = tmp_path / "outside_spec.toml"
    listed.write_text(TOML)
    outside = peer_spec.load_outside_spec(listed, target="toy")
    assert outside == {"toy.py:f:other:op:000000000002": "message wording; no property reads it"}
    d = toy_doc()
    ps = report.peer_summary(d, outside)
    assert ps is not None
    wording, sentinel = "toy.py:f:other:op:000000000002", "toy.py:f:other:op:000000000003"
    assert ps["killed_only_by_peer"] == [wording, sentinel]
    # the one listed for another target is still against the SPEC here
    assert ps["peer_only_against_spec"] == [sentinel]
    assert ps["peer_only_outside_spec"] == {wording: "message wording; no property reads it"}


def test_unlisted_peer_only_kill_is_reported_against_the_spec(tmp_path: Path) -> None:
    d = toy_doc()
    ps = report.peer_summary(d, {})
    assert ps is not None
    assert ps["peer_only_against_spec"] == ps["killed_only_by_peer"]
    assert len(ps["peer_only_against_spec"]) == 2 and ps["peer_only_outside_spec"] == {}
    # the default list (mutation/outside_spec.toml) names no toy mutant either
    assert report.peer_summary(d)["peer_only_against_spec"] == ps["killed_only_by_peer"]  # type: ignore[index]


def test_markdown_shows_both_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    listed = tmp_path / "outside_spec.toml"
    listed.write_text(TOML)
    monkeypatch.setattr(peer_spec, "OUTSIDE_SPEC_FILE", listed)
    _js, md = report.write_reports(toy_doc(), tmp_path / "out")
    text = md.read_text()
    # a peer document without a label is named after its target
    assert "Killed by toy's tests and not by ctxaudit: 2:" in text
    assert "- against a SPEC property (a gap in ctxaudit's suite; should be 0): 1" in text
    assert "  - `toy.py:f:other:op:000000000003` (other)" in text
    assert "- outside the SPEC (reviewed, `mutation/outside_spec.toml`): 1" in text
    assert "Why outside the SPEC: message wording; no property reads it" in text


def test_entry_without_reason_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "outside_spec.toml"
    bad.write_text('[[outside_spec]]\ntarget = "toy"\nid = "toy.py:f:other:op:1"\n')
    with pytest.raises(MutationError, match="needs target, id and a reason"):
        peer_spec.load_outside_spec(bad)


def test_committed_list_loads() -> None:
    listed = peer_spec.load_outside_spec(target="gitreins")
    assert listed and all(why for why in listed.values())
