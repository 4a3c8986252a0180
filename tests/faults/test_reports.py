"""Reports appear whole or not at all, and one broken report does not break the matrix.

- A truncated or foreign ``findings.json`` in ``--out`` (an audit killed mid-write by an
  older ctxaudit, a file from elsewhere) is left out of the matrix and named, in the
  matrix and in one stderr line; the audit's exit code stays that of what it checked.
- Every report file the audit writes goes through ``ctxaudit/atomic.py``: a write that
  truncates the file in place (``Path.write_text``) is refused here, and a reader that
  polls a report while it is rewritten never reads a partial file.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ctxaudit import audit as the_audit
from ctxaudit import matrix
from ctxaudit.timing import AuditTime
from mutation import report as mutation_report
from tests.audit import golden_inputs as inputs
from tests.faults.test_interrupt import Run, toy_audits


@pytest.fixture
def audit(tmp_path: Path) -> Iterator[Callable[..., Run]]:
    """An audit of the toy target (tests/faults/test_interrupt.py), in its own process."""
    with toy_audits(tmp_path) as start:
        yield start


def _good(out: Path, version: str, verdict: str = "holds") -> Path:
    folder = out / f"toy-{version}"
    folder.mkdir(parents=True)
    data = {"target": "toy", "version": version, "profile": "ci", "seed": 1,
            "elapsed_s": 1.0, "exit_status": 0, "verdicts": {"T1": verdict}}  # fmt: skip
    (folder / "findings.json").write_text(json.dumps(data))
    return folder


@pytest.mark.fault("truncated-report")
def test_a_truncated_findings_json_in_out_is_skipped_and_named(
    audit: Callable[..., Run], tmp_path: Path
) -> None:
    broken = tmp_path / "reports" / "toy-0.9"  # the --out the audit fixture gives
    broken.mkdir(parents=True)
    (broken / "findings.json").write_text('{"target": "toy", "version": "0.9", "verd')
    run: Run = audit("1.0")
    assert run.out == broken.parent
    code, out, err = run.finish()
    assert code == 0, f"{out}\n{err}"
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if "matrix" in ln]
    assert len(lines) == 1 and "toy-0.9" in lines[0] and "skipped" in lines[0], err
    md = (run.out / "matrix.md").read_text()
    assert "`toy-0.9/findings.json`" in md and "### toy 1.0:" in md
    assert "toy-0.9/findings.json" in (run.out / "matrix.html").read_text()


@pytest.mark.fault("malformed-report")
@pytest.mark.parametrize(
    "text",
    [
        '{"target": "toy", "version": "0.8", "verdicts": ["T1"]}',
        '{"target": "toy", "version": "0.8", "verdicts": {"T1": "maybe"}}',
        '{"target": "toy", "version": "0.8", "known": [{"id": "K"}], "exit_status": "x"}',
        '{"target": "toy", "version": "0.8", "findings": {"a": 1}}',
        "[]",
        "",
    ],
    ids=["verdicts-list", "unknown-verdict", "exit-status-text", "findings-object", "list",
         "empty"],
)  # fmt: skip
def test_the_matrix_skips_a_report_of_the_wrong_shape(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _good(tmp_path, "1.0")
    bad = tmp_path / "toy-0.8"
    bad.mkdir()
    (bad / "findings.json").write_text(text)
    assert matrix.main([str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "toy-0.8" in err, err
    md = (tmp_path / "matrix.md").read_text()
    assert "toy-0.8/findings.json" in md and "### toy 1.0:" in md
    m = matrix.build(matrix.find_reports(tmp_path))
    assert [v.version for v in m.versions] == ["1.0"]
    assert [s.dir.name for s in m.skipped] == ["toy-0.8"]


@pytest.mark.fault("malformed-report")
def test_a_broken_mutation_json_drops_only_the_score(tmp_path: Path) -> None:
    folder = _good(tmp_path, "1.0")
    (folder / "mutation.json").write_text('{"files": {"a.py": {"mutants": [')
    m = matrix.build(matrix.find_reports(tmp_path))
    assert [v.version for v in m.versions] == ["1.0"] and m.versions[0].mutation is None
    assert [(s.dir.name, s.file) for s in m.skipped] == [("toy-1.0", "mutation.json")]


def refuse_in_place_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    """``Path.write_text``/``write_bytes`` truncate the file, then fill it: refused."""

    def refuse(self: Path, *args: object, **kwargs: object) -> int:
        raise AssertionError(f"{self.name} written in place, not through ctxaudit/atomic.py")

    monkeypatch.setattr(Path, "write_text", refuse)
    monkeypatch.setattr(Path, "write_bytes", refuse)


def _matrix_inputs(tmp_path: Path) -> Path:
    return inputs.matrix_reports(tmp_path)


@pytest.mark.fault("partial-report")
def test_every_report_is_written_through_atomic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reports = _matrix_inputs(tmp_path / "m")
    m = matrix.build(matrix.find_reports(reports))
    doc = next(iter(inputs.mutation_docs().values()))
    clock = AuditTime(command="ctxaudit audit", profile="ci", jobs=1)
    clock.target("toy-1.0").properties_s = 1.0
    report = next(iter(inputs.findings_reports().values()))
    refuse_in_place_writes(monkeypatch)
    md, page = matrix.write(m, reports, pause=False)
    assert md.read_text().startswith("# Release audit matrix")
    assert page.read_text().rstrip().endswith("</html>")
    timing = clock.write(tmp_path / "t")
    assert timing.read_text()
    assert json.loads(timing.with_suffix(".json").read_text())["profile"] == "ci"
    js, mmd = mutation_report.write_reports(doc, tmp_path / "mu")
    assert json.loads(js.read_text())["files"] and mmd.read_text()
    folder = the_audit.write_reports(report, tmp_path / "f")
    assert json.loads((folder / "findings.json").read_text())["target"] == report.target


@pytest.mark.fault("partial-report")
def test_a_reader_polling_during_rewrites_never_sees_a_partial_matrix(tmp_path: Path) -> None:
    reports = _matrix_inputs(tmp_path)
    m = matrix.build(matrix.find_reports(reports))
    md, page = matrix.write(m, reports, pause=False)
    whole = {md: md.read_text(), page: page.read_text()}
    done = threading.Event()
    partial: list[tuple[str, int]] = []
    reads = 0

    def rewrite() -> None:
        for _ in range(150):
            matrix.write(m, reports, pause=False)
        done.set()

    writer = threading.Thread(target=rewrite)
    writer.start()
    while not done.is_set():
        for path, text in whole.items():
            got = path.read_text()
            reads += 1
            if got != text:
                partial.append((path.name, len(got)))
    writer.join()
    assert reads > 100
    assert partial == [], f"{len(partial)} partial reads of {reads}: {partial[:5]}"


@pytest.mark.fault("report-pair")
@pytest.mark.parametrize("fails", ["first", "second"])
def test_a_report_pair_is_replaced_together_or_not_at_all(tmp_path: Path, fails: str) -> None:
    """``atomic.write_texts``: when one file of the pair cannot be put in place (here a
    folder stands there), the other keeps what it held, or is not made; nothing of the
    new files stays beside them."""
    from ctxaudit import atomic

    first, second = tmp_path / "findings.json", tmp_path / "findings.md"
    (first if fails == "first" else second).mkdir()
    (second if fails == "first" else first).write_text("earlier\n")
    with pytest.raises(OSError) as raised:
        atomic.write_texts({first: "new json\n", second: "new md\n"})
    assert raised.value.filename == str(first if fails == "first" else second)
    kept = second if fails == "first" else first
    assert kept.read_text() == "earlier\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["findings.json", "findings.md"]
    (first if fails == "first" else second).rmdir()
    atomic.write_texts({first: "new json\n", second: "new md\n"})
    assert (first.read_text(), second.read_text()) == ("new json\n", "new md\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["findings.json", "findings.md"]
